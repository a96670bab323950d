extension Op {
    /// Checks a set of operations for dependency cycles before they run.
    ///
    /// Useful when the graph comes from data (a build plan, a manifest): call it on the operations
    /// before adding them to queues, and report the error to whoever supplied the data.
    ///
    /// ```swift
    /// do {
    ///     try Op.checkForDependencyCycles(in: steps)
    ///     queue.addOperations(steps, waitUntilFinished: false)
    /// } catch {
    ///     print(error)   // Dependency cycle: Op "link" → Op "compile" → Op "link" …
    /// }
    /// ```
    ///
    /// The check follows every dependency of the operations, and of their dependencies in turn,
    /// whether finished, cancelled or not. It does not change any operation. A cycle that holds
    /// operations back is normally ended as soon as it is closed (see <doc:Reliability>); the
    /// check also reports the ones that hold nothing back (among cancelled operations) and the ones
    /// too long for the quick search, before anything waits for them.
    ///
    /// - Complexity: O(operations + dependencies) of the graph reachable from `operations`.
    /// - Throws: ``DependencyCycleError`` naming the operations of the first cycle found.
    public static func checkForDependencyCycles(in operations: [Op]) throws(DependencyCycleError) {
        let cycles = DependencyCycles.cycles(from: operations) { $0.dependencies }
        if let cycle = cycles.first {
            throw DependencyCycleError(operations: cycle.map(\.description))
        }
    }

    /// Ends a pending operation with `error`: it is cancelled (so its body never runs and its
    /// dependents go on) and finished at once if it is in no queue.
    final func fail(with error: any Error) {
        performFail(markFailed(with: error))
    }

    /// The transition of ``fail(with:)``; perform its action with ``performFail(_:)``.
    final func markFailed(with error: any Error) -> OpStateMachine.FailAction {
        transition { machine in
            let old = machine.error
            let action = machine.fail(with: error)
            if case .none = action {} else {
                machine.record(.error, old: old as Any, new: machine.error as Any)
            }
            return action
        }
    }

    /// Performs the action of ``markFailed(with:)``.
    final func performFail(_ action: OpStateMachine.FailAction) {
        switch action {
        case .none:
            return
        case .readiness(let readiness):
            performReadiness(readiness)
        case .finish(let finish):
            performFinish(finish, releasesSlot: true)
        }
    }
}
