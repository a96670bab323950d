// The storage side of an operation's state machine: take the operation's stripe lock, run a
// transition, publish the new flags, release the lock, and only then deliver the observable
// changes the transition recorded.

extension Op {
    /// Runs `body` on the state with the operation's lock held.
    ///
    /// `body` must not call user code, and must reach the state only through its argument.
    @inline(__always)
    final func withState<Result>(_ body: (inout OpStateMachine) -> Result) -> Result {
        let stripe = LockTable.stripe(for: self)
        LockTable.lock(stripe)
        defer {
            #if OPERATIONS_INTERNAL_CHECKS
            machine.checkInvariants()
            #endif
            LockTable.unlock(stripe)
        }
        return body(&machine)
    }

    /// Runs a transition with the lock held, publishes the new flags, queues the resulting
    /// observable changes, and delivers them once the lock is released.
    ///
    /// `body` must not call user code, and must reach the state only through its argument
    /// (record changes with ``OpStateMachine/record(_:old:new:)``).
    @inline(__always)
    @discardableResult
    final func transition<Result>(_ body: (inout OpStateMachine) -> Result) -> Result {
        let (result, registry) = transitionDeferringDelivery(body)
        deliver(registry)
        return result
    }

    /// Runs a start or finish transition like ``transition(_:)``: its action (running the body,
    /// finishing) follows the delivery of its changes on this thread, so while their observers run
    /// here, the operation is between two states and cannot move on; the thread context records
    /// that for the wait-deadlock checks (see ``WaitDeadlocks``). If another thread delivers, or
    /// earlier changes are still queued, or this thread is inside a handler of the operation, the
    /// changes are left to whoever delivers, and the action goes ahead at once (see
    /// ``ObserverRegistry/deliverHolding(_:from:)``).
    @inline(__always)
    final func lifecycleTransition<Result>(_ body: (inout OpStateMachine) -> Result) -> Result {
        let stripe = LockTable.stripe(for: self)
        LockTable.lock(stripe)
        // Most operations have no extras, so no observers: one load tells.
        let registry = machine.extras == nil ? nil : machine.registry
        let firstChange = registry?.nextSequence
        let result = transitionLocked(body)
        LockTable.unlock(stripe)
        if let registry, let firstChange {
            registry.deliverHolding(self, from: firstChange)
        }
        return result
    }

    /// Runs a transition like ``transition(_:)`` but leaves the delivery of its changes to the
    /// caller, which performs the transition's action first and then calls ``deliver(_:)``.
    ///
    /// Observers then run once the operation has moved on (it is on its queue's ready list, its
    /// task is cancelled), so a handler that waits for it does not hold it up. Changes are still
    /// delivered in the order they were made: they are queued under the lock.
    @inline(__always)
    final func transitionDeferringDelivery<Result>(_ body: (inout OpStateMachine) -> Result) -> (Result, ObserverRegistry?) {
        let stripe = LockTable.stripe(for: self)
        LockTable.lock(stripe)
        let result = transitionLocked(body)
        let registry = machine.registry
        LockTable.unlock(stripe)
        return (result, registry)
    }

    /// Calls the observers with the changes queued in `registry`, the operation's registry (if it
    /// has one).
    @inline(__always)
    final func deliver(_ registry: ObserverRegistry?) {
        registry?.deliver(to: self)
    }

    /// The body of ``transition(_:)``, for callers that already hold the lock (two-operation
    /// transitions). The caller delivers with ``deliverChanges()`` after unlocking.
    @inline(__always)
    final func transitionLocked<Result>(_ body: (inout OpStateMachine) -> Result) -> Result {
        let before = flags.load(ordering: .relaxed)
        let priorityBefore = Op.priority(of: &machine)
        // Everything is read through one inout access: reading the machine's computed properties
        // through the stored property would copy the whole struct (and retain its references).
        return Op.apply(body, to: &machine) { machine, result in
            #if OPERATIONS_INTERNAL_CHECKS
            machine.checkInvariants()
            #endif
            // The instrumented bit is not the machine's: it is set under this lock, and kept.
            let after = machine.flags | (before & Flags.instrumented)
            if after != before {
                flags.store(after, ordering: .releasing)
            }
            if let registry = machine.registry, !registry.isEmpty {
                Op.recordFlagChanges(before: before, after: after, priorityAfter: machine.priority,
                                     priorityBefore: registry.observes(OpProperty.queuePriority.rawValue) ? priorityBefore : nil,
                                     into: registry)
            }
        }
    }

    /// Delivers the changes recorded by ``transitionLocked(_:)``. Call with no lock held.
    final func deliverChanges() {
        deliver(withState { $0.registry })
    }

    /// Runs `body` on `machine`, then `after` with the machine and the result, in one access.
    @inline(__always)
    private static func apply<Result>(
        _ body: (inout OpStateMachine) -> Result,
        to machine: inout OpStateMachine,
        after: (inout OpStateMachine, Result) -> Void
    ) -> Result {
        let result = body(&machine)
        after(&machine, result)
        return result
    }

    @inline(__always)
    private static func priority(of machine: inout OpStateMachine) -> QueuePriority {
        machine.priority
    }

    private static func recordFlagChanges(before: UInt8, after: UInt8, priorityAfter: QueuePriority,
                                          priorityBefore: QueuePriority?, into registry: ObserverRegistry) {
        let changed = before ^ after
        func recordFlag(_ flag: UInt8, _ property: OpProperty) {
            if changed & flag != 0 {
                registry.record(property: property.rawValue, oldValue: before & flag != 0, newValue: after & flag != 0)
            }
        }
        recordFlag(Flags.cancelled, .isCancelled)
        recordFlag(Flags.executing, .isExecuting)
        recordFlag(Flags.finished, .isFinished)
        recordFlag(Flags.ready, .isReady)
        if let priorityBefore, priorityAfter != priorityBefore {
            registry.record(property: OpProperty.queuePriority.rawValue, oldValue: priorityBefore, newValue: priorityAfter)
        }
    }

    /// Performs a readiness action: puts the operation on its queue's ready list.
    @inline(__always)
    final func performReadiness(_ action: OpStateMachine.ReadinessAction) {
        switch action {
        case .none:
            return
        case .schedule(let queue, let schedule):
            queue.schedule(self, schedule)
        case .passGates:
            passGates()
        }
    }
}
