// How operations enter a queue, become ready in it, give back their slots and leave it: each
// runs an event of the scheduler under the queue's lock and performs the action after unlocking.

extension OpQueue {
    /// Adds operations given to one of the public `addOperation` methods. To a group's queue of
    /// children (``OpQueue/current`` in a child), they are added as children of the group, which
    /// then adds them here: an operation in this queue is always a child that the group counts.
    ///
    /// With `reserved`, room was reserved for the one operation (``tryAddOperation(_:)``,
    /// ``enqueue(_:)``): if the queue closed meanwhile, it is left untouched and the result is
    /// `false`. Without, a closed queue turns the operations away (see ``close()``).
    @discardableResult
    final func admit<Operations: Collection<Op>>(_ operations: Operations, reserved: Bool = false) -> Bool {
        guard isGroupQueue else {
            return enqueue(operations, reserved: reserved)
        }
        guard let group = withLock({ owningGroup }) else {
            let named = operations.first.map { "\($0)" } ?? "An operation"
            misuse("\(named) was added to the queue of a group's children after the group finished. That queue (OpQueue.current in a child) takes children only while its group runs: add the operation to a queue of its own, or as a child of a running group.")
        }
        if reserved { withLock { admission.reservationUsed() } }
        group.addChildren(Array(operations))
        return true
    }

    /// Adds operations without waiting for them; any drainer that the additions request runs as
    /// a job of its own (on the worker pool or the underlying queue), never on the calling thread.
    ///
    /// A closed queue turns them away (see ``close()``), or, with `reserved` (room was reserved
    /// for the one operation), leaves it untouched and returns `false`.
    @discardableResult
    final func enqueue<Operations: Collection<Op>>(_ operations: Operations, reserved: Bool = false) -> Bool {
        // A queue seen closed here turns the operations away before their conditions are looked
        // at (one that closes after this is seen closed under the lock below).
        if isClosedFlag.load(ordering: .relaxed) {
            return enqueueClosed(operations, reserved: reserved)
        }
        // The queue's observers hear of each operation before it joins (they may change it).
        let observers = hasQueueObservers.load(ordering: .relaxed) ? announceAdding(operations) : []
        if Instruments.isActive {
            // Before any of them can start.
            Instruments.enqueued(operations, in: self)
        }
        var withConditions: [Op] = []   // a loop, not `filter`: no array is made when none has any
        // Operations with observers may have a total timeout, armed once they are in (only an
        // observed operation can have one: its tracker is an observer).
        var observed: [Op] = []
        for operation in operations {
            let flags = operation.flags.load(ordering: .relaxed)
            guard flags & (Op.Flags.gated | Op.Flags.observed) != 0 else { continue }
            if flags & Op.Flags.gated != 0 { withConditions.append(operation) }
            if flags & Op.Flags.observed != 0 { observed.append(operation) }
        }
        if !withConditions.isEmpty {
            // The operations their conditions contributed as dependencies join first (even for a
            // cancelled one: they were promised a queue), then the conditions may pass at once.
            // One look at each: what its conditions contributed, and whether they pass at once.
            var contributed: [Op] = []
            var passingEarly: [(operation: Op, conditions: [OpCondition], generation: UInt32)] = []
            for operation in withConditions where operation.conditionsNeedALook {
                let (dependencies, early) = operation.withState { ($0.takeConditionDependencies(), $0.startPassingGatesEarly()) }
                if !dependencies.isEmpty { contributed += dependencies }
                if let early { passingEarly.append((operation, early.conditions, early.generation)) }
            }
            addConditionDependencies(contributed, addedWith: operations)
            for early in passingEarly {
                early.operation.conditionsPassedEarly(early.conditions, generation: early.generation)
            }
        }
        var drainerRequested = false
        var stallCheck: UInt64?
        var refused: Op?
        var misuse = OpStateMachine.Misuse.enqueueWhileEnqueued
        var barriers = 0
        var gated: [Op] = []
        var discarded: [ReadyLists.Entry]?
        var wasClosed = false
        let changes: QueueChanges = withLock {
            if admission.isClosed {
                // Closed after the check above: turned away below.
                wasClosed = true
                return QueueChanges()
            }
            let countBefore = machine.operationCount
            let operationsBefore = observedOperations()
            if reserved { admission.reservationUsed() }
            for operation in operations {
                // The operation is enqueued (or refused) before it becomes a member, so that a
                // refused one never touches this queue's fields. Holding the queue's lock, no
                // readiness change can reach the queue in between.
                let enqueued = operation.withState { $0.enqueue(in: self) }
                if case .misuse(let refusal) = enqueued {
                    // Trapped below, outside the lock: the message calls `description`, which a
                    // subclass may override.
                    refused = operation
                    misuse = refusal
                    break
                }
                if machine.addMember(operation) { barriers += 1 }
                switch enqueued {
                case .schedule(let schedule):
                    let entry = ReadyLists.Entry(operation: operation, ticket: schedule.ticket)
                    drainerRequested = machine.push(entry, priority: schedule.priority, callerWillPoll: false) || drainerRequested
                case .passGates:
                    gated.append(operation)
                case .wait, .misuse:
                    break
                }
            }
            if let generation = machine.stallCheckIfNeeded() { stallCheck = generation }
            discarded = machine.takeDiscarded()
            return recordMembershipChange(countBefore: countBefore, operationsBefore: operationsBefore)
        }
        withExtendedLifetime(discarded) {}   // stale entries, released outside the lock
        if wasClosed { return enqueueClosed(operations, reserved: reserved) }
        if barriers > 0 { DependencyCycles.pendingBarriers.add(barriers, ordering: .relaxed) }
        if let refused {
            refused.trap(misuse)
        }
        if let stallCheck { scheduleStallCheck(generation: stallCheck) }
        if drainerRequested { startDrainer() }
        if changes.recorded { registryDeliver() }
        for operation in gated {
            operation.passGates()
        }
        for operation in observed {
            operation.armTotalTimeout()
        }
        if CycleWatch.count.load(ordering: .relaxed) > 0 {
            CycleWatch.noteEnqueued(operations)
        }
        if !observers.isEmpty {
            for operation in operations {
                for observer in observers { observer.didAdd(self, operation: operation) }
            }
        }
        return true
    }

    /// Operations added after the queue closed: each is cancelled with ``OpQueueClosedError`` and
    /// finishes at once, without running, on the calling thread (unless adding it is a programmer
    /// error, which traps as on an open queue). With `reserved`, the one operation is left
    /// untouched instead, and the result is `false`.
    private final func enqueueClosed<Operations: Collection<Op>>(_ operations: Operations, reserved: Bool) -> Bool {
        let refusal: (Op, OpStateMachine.Misuse)? = withLock {
            // The closing told every adder that waited: a reservation given back opens no room.
            if reserved { admission.reservationUsed() }
            guard !reserved else { return nil }
            if !coalescing.isEmpty {
                // Added with a coalescing key, turned away: the key is free.
                for operation in operations { coalescing.remove(operation) }
            }
            for operation in operations {
                if let refusal = operation.withState({ $0.refusal(joining: self) }) { return (operation, refusal) }
            }
            return nil
        }
        if let (operation, misuse) = refusal { operation.trap(misuse) }
        guard !reserved else { return false }
        let error = closedError
        for operation in operations {
            operation.cancel(with: error)
            operation.start()
        }
        return true
    }

    /// Adds the operations that the conditions of `gated` contributed as dependencies to this
    /// queue (to the group whose children it runs, if it is a group's queue: the group is running,
    /// and cannot finish before `gated`, which are not added yet), unless they are in `batch`,
    /// started, in a queue or children of a group already (a group's child runs in its group).
    private final func addConditionDependencies<Operations: Collection<Op>>(_ contributed: [Op], addedWith batch: Operations) {
        guard !contributed.isEmpty else { return }
        let inBatch = Set(batch.lazy.map(ObjectIdentifier.init))
        var seen: Set<ObjectIdentifier> = []
        let dependencies = contributed.filter { dependency in
            !inBatch.contains(ObjectIdentifier(dependency)) && seen.insert(ObjectIdentifier(dependency)).inserted
                && dependency.withState { $0.membership.isFree && $0.lifecycle == .pending }
        }
        guard !dependencies.isEmpty else { return }
        if let group = withLock({ owningGroup }) {
            group.addChildren(dependencies)
        } else {
            enqueue(dependencies)
        }
    }

    /// Puts a member that became ready on the ready list.
    final func schedule(_ operation: Op, _ schedule: OpStateMachine.Schedule) {
        let callerWillPoll = ThreadContext.isPolling(self)
        let (request, discarded) = withLock {
            (machine.push(ReadyLists.Entry(operation: operation, ticket: schedule.ticket),
                          priority: schedule.priority, callerWillPoll: callerWillPoll),
             machine.takeDiscarded())
        }
        withExtendedLifetime(discarded) {}   // stale entries, released outside the lock
        if request { startDrainer() }
    }

    /// Puts several members that became ready at the same moment on their queues' ready lists,
    /// one lock acquisition per queue, so that each queue sees them all before it picks one.
    ///
    /// - Complexity: O(`ready.count`), however many queues they are spread across.
    static func scheduleTogether(_ ready: [(operation: Op, queue: OpQueue, schedule: OpStateMachine.Schedule)]) {
        guard let first = ready.first else { return }
        // Usually one queue (a fan-out within a queue): no grouping needed.
        if ready.allSatisfy({ $0.queue === first.queue }) {
            push(ready[...], to: first.queue)
            return
        }
        // Grouped by queue in one pass, queues in the order they first appear, each queue's
        // members in their order.
        var groups: [[(operation: Op, queue: OpQueue, schedule: OpStateMachine.Schedule)]] = []
        var groupOfQueue: [ObjectIdentifier: Int] = [:]
        for item in ready {
            let id = ObjectIdentifier(item.queue)
            if let index = groupOfQueue[id] {
                groups[index].append(item)
            } else {
                groupOfQueue[id] = groups.count
                groups.append([item])
            }
        }
        for group in groups {
            push(group[...], to: group[0].queue)
        }
    }

    /// Pushes `items`, all members of `queue`, on its ready lists under one lock acquisition.
    private static func push(_ items: ArraySlice<(operation: Op, queue: OpQueue, schedule: OpStateMachine.Schedule)>,
                             to queue: OpQueue) {
        let callerWillPoll = ThreadContext.isPolling(queue)
        let (request, discarded) = queue.withLock {
            var request = false
            for item in items {
                let entry = ReadyLists.Entry(operation: item.operation, ticket: item.schedule.ticket)
                request = queue.machine.push(entry, priority: item.schedule.priority, callerWillPoll: callerWillPoll) || request
            }
            // Stale entries a push dropped are released after unlocking: one may hold the last
            // reference to a finished operation.
            return (request, queue.machine.takeDiscarded())
        }
        withExtendedLifetime(discarded) {}
        if request { queue.startDrainer() }
    }

    /// `operation`, a running member, reports `progress`: the queue's progress counts its fraction
    /// until it leaves. Ignored if it has left already.
    final func memberReportsProgress(_ operation: Op, _ progress: OpProgress) {
        withLock {
            guard operation.membership.slot >= 0 else { return }
            self.progress.memberStarted(operation, reporting: progress)
        }
    }

    /// An operation gave its slot back outside a drainer. With `mayDrainHere` (an asynchronous
    /// operation finishing in the task of its own `async` body), a drainer that this requests is
    /// left to the caller, to run with ``drainStartsHere()``, unless the queue runs on an
    /// ``underlyingQueue``; the result says whether it was.
    @discardableResult
    final func releaseSlot(of operation: Op, mayDrainHere: Bool = false) -> Bool {
        let (request, onUnderlyingQueue) = withLock { (machine.releaseSlot(), storedUnderlyingQueue != nil) }
        guard request else { return false }
        if mayDrainHere && !onUnderlyingQueue { return true }
        startDrainer()
        return false
    }

    /// A member is finished for good: it leaves the queue, then completes (outside a drainer).
    final func leave(_ operation: Op) {
        var admitted: OpQueueStateMachine.Admission.Told = []
        let leaving = withLock {
            let leaving = leaveLocked(operation, callerWillPoll: false)
            if admission.hasWaiters { admitted = admitWaiters() }
            return leaving
        }
        if !admitted.isEmpty { OpQueue.tell(admitted) }
        performLeaving(leaving, completing: operation)
    }

    /// What a member's leaving asks for once the lock is released.
    struct Leaving {
        var action: OpQueueStateMachine.Action
        var changes: QueueChanges
        var stallCheck: UInt64?
        var discarded: [ReadyLists.Entry]?
    }

    /// Removes a member that is finished for good. Call with the lock held.
    final func leaveLocked(_ operation: Op, callerWillPoll: Bool) -> Leaving {
        let countBefore = machine.operationCount
        let operationsBefore = observedOperations()
        let action = machine.removeMember(operation, callerWillPoll: callerWillPoll)
        if !coalescing.isEmpty { coalescing.remove(operation) }
        // Counted under the lock: a waiter released by a later leaving (the queue emptied) must
        // see this one counted, even if this thread is preempted before it performs the rest.
        progress.memberLeft(operation)
        if action.barrierLeft {
            DependencyCycles.pendingBarriers.subtract(1, ordering: .relaxed)
        }
        let discarded = machine.takeDiscarded()
        registry.record(property: QueueProperty.finishedOperation.rawValue, oldValue: (), newValue: operation)
        var changes = recordMembershipChange(countBefore: countBefore, operationsBefore: operationsBefore)
        changes.recorded = changes.recorded || registry.observes(QueueProperty.finishedOperation.rawValue)
        return Leaving(action: action, changes: changes, stallCheck: machine.stallCheckIfNeeded(), discarded: discarded)
    }

    /// Performs what a member's leaving asks for, outside the lock: observers; then
    /// the operation that left completes (its waiters see it gone), and last the waiters of the
    /// queue are released.
    final func performLeaving(_ leaving: Leaving, completing: Op) {
        withExtendedLifetime(leaving.discarded) {}
        if let stallCheck = leaving.stallCheck { scheduleStallCheck(generation: stallCheck) }
        if leaving.action.requestDrainer { startDrainer() }
        if leaving.changes.recorded {
            // The operation has left, but it completes only after the handlers return.
            ThreadContext.withDelivery(of: completing, hasLeftQueue: true) {
                registryDeliver()
            }
        }
        completing.complete(leaving: nil)
        if isGroupQueue, let group = withLock({ owningGroup }) {
            group.childFinished(completing)
        }
        for waiter in leaving.action.waiters {
            waiter()
        }
        withExtendedLifetime(leaving.action.departed) {}
    }
}

// MARK: Lanes of mutual exclusivity

extension OpQueue {
    /// The single exclusivity category by which `operation` waits in a lane of its queue (see
    /// ``OpQueueStateMachine/Lane``), or `nil`: a group asks for its children's categories too,
    /// and an operation with several categories asks the table directly.
    static func laneCategory(of operation: Op) -> String? {
        guard !(operation is GroupOp) else { return nil }
        return operation.withState { $0.laneCategory }
    }

    /// `operation` no longer asks for its lane's category (a dependency was added to it): the
    /// operations of this queue parked behind it go on.
    final func releaseLane(of operation: Op) {
        let (requestsDrainer, discarded) = withLock { (machine.releaseLane(of: operation, callerWillPoll: false), machine.takeDiscarded()) }
        withExtendedLifetime(discarded) {}
        if requestsDrainer { startDrainer() }
    }

    /// `operation` was cancelled: if it is parked in a lane, it goes to the front of the ready
    /// lists, to finish at once.
    final func unparkCancelled(_ operation: Op) {
        let requestsDrainer = withLock { machine.unparkCancelled(operation) }
        if requestsDrainer { startDrainer() }
    }
}

extension OpQueue {
    /// Whether `operation` is parked in one of this queue's lanes (for tests and diagnostics).
    final func isParkedInLane(_ operation: Op) -> Bool {
        withLock { operation.membership.isParked }
    }

    /// How many lanes the queue keeps (for tests: a lane goes once it is idle).
    final var laneCount: Int {
        withLock { (machine.soleLane == nil ? 0 : 1) + machine.lanes.count }
    }
}
