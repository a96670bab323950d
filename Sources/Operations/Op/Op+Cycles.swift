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
    /// whether finished, cancelled or not. It does not change any operation and reports nothing
    /// to ``OpDiagnostics``. It also finds the cycles that hold nothing back (among cancelled
    /// operations) and the ones too long for the quick search on a new dependency (see
    /// <doc:Reliability>).
    ///
    /// - Complexity: O(operations + dependencies) of the graph reachable from `operations`.
    /// - Throws: ``DependencyCycleError`` naming the operations of the first cycle found.
    public static func checkForDependencyCycles(in operations: [Op]) throws(DependencyCycleError) {
        let cycles = DependencyCycles.cycles(from: operations) { $0.dependencies }
        if let path = cycles.first {
            throw DependencyCycle(path: path, barrierEdges: path.map { _ in false }).error
        }
    }

    /// The transition that ends a pending operation on a dependency cycle with `error`: it is
    /// cancelled (so its body never runs and its dependents go on), and finished at once if it is
    /// in no queue. Perform the action with ``performFail(_:)``, then deliver the changes (and the
    /// `didCancel` queued for the ``OpObserver``s).
    final func markFailed(with error: any Error) -> (action: OpStateMachine.FailAction, registry: ObserverRegistry?, observers: ObserverRegistry?) {
        let ((action, observers), registry) = transitionDeferringDelivery { machine in
            let old = machine.error
            let action = machine.fail(with: error)
            var observers: ObserverRegistry?
            if case .none = action {} else {
                machine.record(.error, old: old as Any, new: machine.error as Any)
                observers = machine.observers?.queuing(.didCancel(error: machine.error))
            }
            return (action, observers)
        }
        return (action, registry, observers)
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
