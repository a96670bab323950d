import Testing
import Dispatch
@testable import Operations

/// A mutual-exclusivity category is granted only to an operation that its queue starts now: not
/// to one in a suspended queue, behind a barrier, or waiting for a free slot (issue 22, defect 9:
/// an operation granted a category while its queue was suspended kept every other queue's
/// operations of that category waiting until the queue resumed).
@Suite struct ExclusivityGoesToRunnableOperationsTests {
    /// A block operation with a `.mutuallyExclusive` condition for `category`.
    private func exclusive(_ category: String, _ block: @escaping @Sendable () -> Void = {}) -> BlockOp {
        let op = BlockOp(block: block)
        op.addCondition(.mutuallyExclusive(category))
        return op
    }

    private func holders(_ category: String) -> [ObjectIdentifier] {
        Exclusivity.holders(of: category).map(ObjectIdentifier.init)
    }

    private func gate(of op: Op) -> OpStateMachine.Gate {
        op.withState { $0.gate }
    }

    private func drains(_ queue: OpQueue, seconds: Double = 10) -> Bool {
        eventually(seconds: seconds) { queue.operationCount == 0 }
    }

    @Test func anOperationOfASuspendedQueueDoesNotKeepOthersFromItsCategory() {
        let category = uniqueToken("suspended")
        let log = EventLog<String>()
        let suspended = OpQueue()
        suspended.isSuspended = true
        let parked = exclusive(category) { log.append("parked") }
        suspended.addOperation(parked)
        let running = OpQueue()
        let other = exclusive(category) { log.append("other") }
        running.addOperation(other)
        #expect(eventually(seconds: 5) { other.isFinished }, "the other queue's operation waits for the suspended one")
        // Finished first, then it gives the category back (on its own thread).
        #expect(eventually(seconds: 5) { holders(category).isEmpty })
        suspended.isSuspended = false
        #expect(drains(suspended))
        #expect(drains(running))
        #expect(log.all == ["other", "parked"])
        #expect(holders(category).isEmpty)
    }

    /// The exclusivity table knows suspended queues by identity alone: a queue released while
    /// suspended leaves it as it is deinitialized, so that a queue made later at the same address
    /// is not taken for suspended.
    @Test func aQueueReleasedWhileSuspendedIsForgottenByTheTable() {
        var id: ObjectIdentifier?
        do {
            let queue = OpQueue()
            queue.isSuspended = true
            id = ObjectIdentifier(queue)
            #expect(Exclusivity.countsAsSuspended(ObjectIdentifier(queue)))
            queue.isSuspended = false
            #expect(!Exclusivity.countsAsSuspended(ObjectIdentifier(queue)))
            queue.isSuspended = true
        }
        #expect(!Exclusivity.countsAsSuspended(id!))
    }

    @Test func aWaitingOperationWhoseQueueIsSuspendedStepsAside() {
        let category = uniqueToken("step-aside")
        let log = EventLog<String>()
        let holderStarted = Gate()
        let release = Gate()
        let holder = exclusive(category) {
            holderStarted.open()
            release.wait()
            log.append("holder")
        }
        let holderQueue = OpQueue()
        holderQueue.addOperation(holder)
        #expect(holderStarted.wait())
        // Waits for the holder in a running queue, which is then suspended.
        let suspendedQueue = OpQueue()
        let stepsAside = exclusive(category) { log.append("steps aside") }
        suspendedQueue.addOperation(stepsAside)
        #expect(eventually(seconds: 5) { waitsForItsCategory(stepsAside) })
        suspendedQueue.isSuspended = true
        // A later request from another queue: it goes first now.
        let laterQueue = OpQueue()
        let later = exclusive(category) { log.append("later") }
        laterQueue.addOperation(later)
        release.open()
        let laterRan = eventually(seconds: 5) { later.isFinished }
        #expect(laterRan, "the suspended queue's operation was given the category")
        suspendedQueue.isSuspended = false
        #expect(drains(suspendedQueue))
        #expect(drains(laterQueue))
        #expect(log.all == ["holder", "later", "steps aside"])
        #expect(holders(category).isEmpty)
    }

    @Test func anOperationBehindABarrierDoesNotTakeTheCategoryFromOneBeforeTheBarrier() {
        let category = uniqueToken("barrier")
        let log = EventLog<String>()
        let queue = OpQueue()
        let trigger = BlockOp {}
        let early = exclusive(category) { log.append("early") }
        early.addDependency(trigger)
        queue.addOperation(early)
        queue.addBarrierBlock { log.append("barrier") }
        let late = exclusive(category) { log.append("late") }
        queue.addOperation(late)
        trigger.start()
        let drained = drains(queue, seconds: 5)
        #expect(drained, "the operation behind the barrier holds the category the barrier waits for")
        if !drained {
            early.cancel()   // unsticks the queue, so that the test leaves nothing behind
            #expect(drains(queue))
        }
        #expect(log.all == ["early", "barrier", "late"])
        #expect(holders(category).isEmpty)
    }

    @Test func anOperationWaitingForASlotDoesNotHoldItsCategory() {
        let category = uniqueToken("slot")
        let log = EventLog<String>()
        let busy = Gate()
        let blockerStarted = Gate()
        let serial = OpQueue()
        serial.maxConcurrentOperationCount = 1
        serial.addOperation {
            blockerStarted.open()
            busy.wait()
        }
        #expect(blockerStarted.wait())
        let waitsForSlot = exclusive(category) { log.append("waits for slot") }
        serial.addOperation(waitsForSlot)
        let other = OpQueue()
        let runsNow = exclusive(category) { log.append("runs now") }
        other.addOperation(runsNow)
        #expect(eventually(seconds: 5) { runsNow.isFinished }, "the operation waiting for a slot holds the category")
        busy.open()
        #expect(drains(serial))
        #expect(log.all == ["runs now", "waits for slot"])
        #expect(holders(category).isEmpty)
    }

    @Test func aGroupInASerialQueueGetsTheCategoryForItsChildBeforeAQueueMateWaitingForTheSlot() {
        // The group holds the serial queue's only slot while its child runs: a queue-mate that
        // took the child's category while waiting for that slot would never get it.
        let category = uniqueToken("group-slot")
        let log = EventLog<String>()
        let busy = Gate()
        let blockerStarted = Gate()
        let serial = OpQueue()
        serial.maxConcurrentOperationCount = 1
        serial.addOperation {
            blockerStarted.open()
            busy.wait()
        }
        #expect(blockerStarted.wait())
        let queueMate = exclusive(category) { log.append("queue-mate") }
        serial.addOperation(queueMate)
        let child = exclusive(category) { log.append("child") }
        let group = GroupOp(operations: [child])
        group.queuePriority = .high
        serial.addOperation(group)
        busy.open()
        let drained = drains(serial, seconds: 5)
        #expect(drained, "deadlock: the group waits for its child, the child for the queue-mate, the queue-mate for the group's slot")
        if !drained {
            queueMate.cancel()
            #expect(drains(serial))
        }
        #expect(log.all == ["child", "queue-mate"])
        #expect(holders(category).isEmpty)
    }
}
