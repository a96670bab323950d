import Dispatch

// Conditions and exclusivity: adding them, and passing them between readiness and the ready list
// (the machine's gate; see `OpStateMachine.Gate`).

extension Op {
    /// Adds a condition the operation must pass, after its dependencies finished, before it runs.
    ///
    /// See ``OpCondition`` for when conditions are evaluated and what a failure does. A
    /// ``OpCondition/dependency(_:)`` condition makes its operation a dependency now.
    ///
    /// - Important: Conditions are added before the operation is added to a queue (or started):
    ///   adding one later is a programmer error and traps, and so is a
    ///   ``OpCondition/mutuallyExclusive(_:)`` inside ``OpCondition/any(_:)`` or ``OpCondition/not(_:)``.
    public final func addCondition(_ condition: OpCondition) {
        if let misplaced = condition.misplacedExclusivity {
            misuse("addCondition(_:) on \(self) was given \(condition.name), where \(misplaced.name) cannot be honoured: an exclusivity category is held while the operation runs, whatever other conditions say. Add .mutuallyExclusive on its own, or inside .all.")
        }
        let accepted = withState { machine in
            machine.queue == nil && machine.addCondition(condition)
        }
        if !accepted {
            misuse("addCondition(_:) was called on \(self) after it was added to a queue or started. Add every condition before adding the operation to a queue.")
        }
        for dependency in condition.contributedDependencies {
            addDependency(dependency)
        }
    }

    /// The conditions, in the order they were added.
    public final var conditions: [OpCondition] {
        withState { $0.conditions }
    }

    // MARK: Passing the gates

    /// Evaluates the conditions of an operation that became ready in its queue, then asks for its
    /// exclusivity categories; the operation goes on the ready list once both are passed (or,
    /// cancelled by a failed condition, to finish without running).
    final func passGates() {
        let (conditions, isAsynchronous) = withState { $0.conditionsToEvaluate }
        if isAsynchronous {
            let priority = TaskPriority(qualityOfService)
            Task(priority: priority) { [self] in
                conditionsEvaluated(await OpCondition.evaluate(conditions, for: self))
            }
        } else {
            conditionsEvaluated(OpCondition.evaluateSynchronously(conditions, for: self))
        }
    }

    /// Evaluates the conditions of an operation that is ready and about to be added to a queue, if
    /// it qualifies (``OpStateMachine/startPassingGatesEarly()``), so that the queue schedules it
    /// with the others it adds, in one go, rather than one by one once they passed.
    final func passGatesEarly() {
        guard let conditions = withState({ $0.startPassingGatesEarly() }) else { return }
        conditionsEvaluated(OpCondition.evaluateSynchronously(conditions, for: self))
    }

    /// Performs what the result of the conditions asks for.
    private final func conditionsEvaluated(_ failure: (any Error)?) {
        let ((askExclusivity, readiness, observers), registry) = transitionDeferringDelivery {
            $0.recordConditions(failure: failure)
        }
        performReadiness(readiness)
        deliver(registry)
        observers?.deliverQueued(from: self)
        if askExclusivity {
            Exclusivity.request(self, categories: exclusivityCategoriesToRequest) { [self] in
                exclusivityGranted()
            }
        }
    }

    /// The categories were granted: the operation goes on its ready list (or, if it moved on
    /// meanwhile, gives them back).
    private final func exclusivityGranted() {
        guard let readiness = transition({ $0.exclusivityGranted() }) else {
            Exclusivity.release(self)
            return
        }
        performReadiness(readiness)
    }

    /// The categories to ask for: the operation's own and, for a group, those of its children.
    final var exclusivityCategoriesToRequest: [String] {
        var categories = withState { $0.exclusivityCategories }
        if let group = self as? GroupOp {
            categories += group.descendantExclusivityCategories
        }
        return Array(Set(categories)).sorted()
    }

    /// Passes the gates on the calling thread, for a manual ``start()``: evaluates the conditions
    /// (blocking while `async` ones run) and waits for the exclusivity categories.
    final func passGatesBlocking() {
        let (conditions, isAsynchronous) = withState { $0.conditionsToEvaluate }
        let failure: (any Error)?
        if isAsynchronous {
            let result = LockedBox<(any Error)?>(nil)
            let done = DispatchSemaphore(value: 0)
            Task(priority: TaskPriority(qualityOfService)) { [self] in
                let outcome = await OpCondition.evaluate(conditions, for: self)
                result.withLockedValue { $0 = outcome }
                done.signal()
            }
            done.wait()
            failure = result.withLockedValue { $0 }
        } else {
            failure = OpCondition.evaluateSynchronously(conditions, for: self)
        }
        let (askExclusivity, _, observers) = transition { $0.recordConditions(failure: failure) }
        observers?.deliverQueued(from: self)
        guard askExclusivity else { return }
        let granted = DispatchSemaphore(value: 0)
        Exclusivity.request(self, categories: exclusivityCategoriesToRequest) { granted.signal() }
        granted.wait()
        exclusivityGranted()
    }
}

extension OpStateMachine {
    /// The conditions were evaluated (``conditionsEvaluated(failure:)``): records the error as an
    /// observable change and, if the failure cancelled the operation, queues `didCancel` for its
    /// observers (in the transition, so that it comes before the finish the cancellation causes).
    mutating func recordConditions(failure: (any Error)?) -> (askExclusivity: Bool, readiness: ReadinessAction, observers: ObserverRegistry?) {
        let old = error
        let wasCancelled = isCancelled
        let (askExclusivity, readiness) = conditionsEvaluated(failure: failure)
        if failure != nil, old == nil, let error {
            record(.error, old: old as Any, new: error as Any)
        }
        let observers = !wasCancelled && isCancelled ? self.observers?.queuing(.didCancel(error: error)) : nil
        return (askExclusivity, readiness, observers)
    }
}
