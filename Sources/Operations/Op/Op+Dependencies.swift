import Synchronization

extension Op {
    /// The operations that must finish before this one can start, in the order they were added.
    ///
    /// Finished dependencies stay in the list until ``removeDependency(_:)`` removes them.
    /// Observable with ``observe(_:options:changeHandler:)``.
    public final var dependencies: [Op] {
        withState { $0.dependencies }
    }

    /// Makes this operation wait until `operation` has finished (or been cancelled and started).
    ///
    /// Dependencies may cross queues. Add them before adding the operations to a queue: once an
    /// operation has started, adding a dependency to it has no effect (it is listed in
    /// ``dependencies`` but holds nothing back). Adding the same dependency twice has no effect.
    ///
    /// - Important: An operation cannot depend on itself; that traps.
    public final func addDependency(_ operation: Op) {
        if operation === self {
            misuse("\(self) cannot depend on itself. Remove the addDependency(_:) call, or make it depend on a different operation.")
        }
        var gateClosing: OpStateMachine.GateClosing?
        let (result, registry, isFirstDependency, heldUntilUnlocked, queue): (OpStateMachine.AddDependencyResult, ObserverRegistry?, Bool, [Op], OpQueue?) = withBothLocked(operation) {
            let dependencyIsUnfinished = !operation.machine.isFinished
            let isNewer = operation.serial > serial
            // An operation finished for good holds a newer dependency weakly if it could be on a
            // loop (see `settleDependencies()`); both locks are held, so no fence is needed.
            var holdsWeakly = false
            // Dependencies that become weakly held are released after unlocking (see
            // `settleDependencies()`).
            let heldUntilUnlocked = machine.lifecycle == .finished ? machine.dependencies : []
            if isNewer, machine.lifecycle == .finished {
                holdsWeakly = operation.machine.hasHadDependencies
                if !holdsWeakly { operation.markHeldByFinishedOperation() }
            }
            if isSealed, !machine.lists(operation) {
                // Operations hold this one strongly, counting on its strong references leading
                // only to dead ends: from now on, it holds every dependency weakly once finished
                // (at once, if it is; see `seal()`). Under this lock, which sealing takes too.
                machine.weakensEveryDependency = true
            }
            let isFirstDependency = !machine.hasHadDependencies
            let result = transitionLocked { machine in
                // The list is only copied for an observer that asked for its values: copying it on
                // every call would make building a large fan-in quadratic.
                let old = machine.observedDependencies()
                let result = machine.addDependency(operation, dependencyIsUnfinished: dependencyIsUnfinished,
                                                   isNewer: isNewer, holdsWeakly: holdsWeakly)
                if case .added = result {
                    machine.recordDependencyChange(from: old)
                }
                gateClosing = machine.takeGateClosing()
                return result
            }
            if case .added(counted: true) = result {
                let registered = operation.machine.addDependent(self)
                precondition(registered, "Internal inconsistency: an unfinished dependency refused its dependent")
            }
            // The queue whose stall check a counted edge rearms, read here rather than with a
            // lock round trip of its own after unlocking.
            let queue: OpQueue? = if case .added(counted: true) = result { machine.queue } else { nil }
            return (result, machine.registry, isFirstDependency, heldUntilUnlocked, queue)
        }
        withExtendedLifetime(heldUntilUnlocked) {}
        if let gateClosing {
            // A ready operation got a dependency: what it passed on its way is undone.
            performGateClosing(gateClosing)
        }
        if case .added = result, isFirstDependency {
            // Its first dependency: if a finished operation holds this one strongly, the new edge
            // could close a loop (see `settleDependencies()`); the fence pairs with that side's.
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            if isHeldByFinishedOperation {
                withStateKeepingDependencies { $0.weakenEveryDependency() }
            }
        }
        if case .added(let counted) = result {
            deliver(registry)
            if counted {
                DependencyCycles.checkNewEdge(dependent: self, dependency: operation)
                // The quick search may not see a long cycle: let the queue look again if it stalls.
                queue?.rearmStallCheck()
            }
        }
    }

    /// Removes `operation` from this operation's dependencies.
    ///
    /// If `operation` had not finished, this operation no longer waits for it, and may become
    /// ready (and start, if it is in a queue) at once.
    public final func removeDependency(_ operation: Op) {
        let action: OpStateMachine.ReadinessAction? = withBothLocked(operation) {
            // By identity or serial number: loading the dependencies would turn weakly held ones
            // into strong references, released here under both locks (possibly the last ones, and
            // a deinitialization takes other operations' locks).
            guard machine.lists(operation) else { return nil }
            let wasCounted = operation.machine.removeDependent(serial: serial)
            if wasCounted {
                DependencyCycles.backwardEdgeResolved(dependentSerial: serial, dependencySerial: operation.serial)
            }
            return transitionLocked { machine in
                let old = machine.observedDependencies()
                let (_, action) = machine.removeDependency(operation, wasCounted: wasCounted)
                machine.recordDependencyChange(from: old)
                return action
            }
        }
        guard let action else { return }
        // The operation is scheduled before its observers hear of it (see `transitionDeferringDelivery`).
        performReadiness(action)
        deliverChanges()
        withState { $0.queue }?.rearmStallCheck()
    }

    /// Called as the operation is deinitialized: every dependency that still lists it as a
    /// dependent forgets it, under the dependency's lock, so that no link to it outlives it (see
    /// ``DependentLink``). A finished dependency is skipped without its lock: its finished flag is
    /// published only once it has taken its list of dependents.
    @inline(__always)
    final func detachFromUnfinishedDependencies() {
        // Deinitializing: no other thread reaches this operation's state any more (a dependency
        // that lists it fails to retain it), so it is read without the lock. The count is asked
        // of the links first: the machine's computed `unfinishedDependencies` copies the whole
        // machine, which a finished operation (the common case here) need not pay for.
        guard let links = machine.links, links.unfinishedDependencyCount > 0 else { return }
        for dependency in machine.unfinishedDependencies {
            let removed = dependency.withState { $0.removeDependent(serial: serial) }
            if removed {
                DependencyCycles.backwardEdgeResolved(dependentSerial: serial, dependencySerial: dependency.serial)
            }
        }
    }

    /// Runs `body` with the operation's lock held, keeping its dependencies alive until the lock
    /// is released: `body` may make some of them weakly held, one may be the last reference, and
    /// a deinitialization takes other operations' locks.
    final func withStateKeepingDependencies(_ body: (inout OpStateMachine) -> Void) {
        let heldUntilUnlocked = withState { machine in
            let held = machine.dependencies
            body(&machine)
            return held
        }
        withExtendedLifetime(heldUntilUnlocked) {}
    }

    /// Runs `body` with the locks of this operation and `other` held.
    private final func withBothLocked<Result>(_ other: Op, _ body: () -> Result) -> Result {
        LockTable.withLocks(LockTable.stripe(for: self), LockTable.stripe(for: other), body)
    }
}
