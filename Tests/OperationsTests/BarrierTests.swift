import Testing
import Dispatch
@testable import Operations

@Suite struct BarrierTests {
    @Test func barrierWaitsForEarlierAndHoldsBackLaterOperations() {
        let queue = OpQueue()
        let log = EventLog<String>()
        for index in 0..<10 {
            queue.addOperation {
                blockThread(milliseconds: index % 3)
                log.append("before")
            }
        }
        queue.addBarrierBlock {
            blockThread(milliseconds: 5)
            log.append("barrier")
        }
        for _ in 0..<10 {
            queue.addOperation { log.append("after") }
        }
        queue.waitUntilAllOperationsAreFinished()
        let events = log.all
        #expect(events.count == 21)
        #expect(Array(events[0..<10]) == Array(repeating: "before", count: 10))
        #expect(events[10] == "barrier")
        #expect(Array(events[11...]) == Array(repeating: "after", count: 10))
    }

    @Test func barrierOnAnEmptyQueueHoldsBackLaterOperations() {
        let queue = OpQueue()
        let log = EventLog<String>()
        let release = Gate()
        queue.addBarrierBlock {
            release.wait()
            log.append("barrier")
        }
        queue.addOperation { log.append("after") }
        blockThread(milliseconds: 10)
        #expect(log.all.isEmpty)
        release.open()
        queue.waitUntilAllOperationsAreFinished()
        #expect(log.all == ["barrier", "after"])
    }

    @Test func barrierDoesNotRunWhileTheQueueIsSuspended() {
        let queue = OpQueue()
        queue.isSuspended = true
        let ran = LockedBox(false)
        queue.addBarrierBlock { ran.withLockedValue { $0 = true } }
        blockThread(milliseconds: 20)
        #expect(!ran.withLockedValue { $0 })
        #expect(queue.operationCount == 1)
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(ran.withLockedValue { $0 })
    }

    @Test func waitUntilAllOperationsAreFinishedWaitsForABarrierOnAnEmptyQueue() {
        let queue = OpQueue()
        let done = LockedBox(false)
        queue.addBarrierBlock {
            blockThread(milliseconds: 30)
            done.withLockedValue { $0 = true }
        }
        queue.waitUntilAllOperationsAreFinished()
        #expect(done.withLockedValue { $0 })
    }

    @Test func consecutiveBarriersRunInOrderWithOperationsBetween() {
        let queue = OpQueue()
        let log = EventLog<String>()
        queue.addOperation { log.append("a") }
        queue.addBarrierBlock { log.append("B1") }
        queue.addOperation { log.append("b") }
        queue.addOperation { log.append("b") }
        queue.addBarrierBlock { log.append("B2") }
        queue.addBarrierBlock { log.append("B3") }
        queue.addOperation { log.append("c") }
        queue.waitUntilAllOperationsAreFinished()
        #expect(log.all == ["a", "B1", "b", "b", "B2", "B3", "c"])
    }

    @Test func barrierWaitsForAnOperationThatBecomesReadyLater() {
        let queue = OpQueue()
        let log = EventLog<String>()
        let dependency = BlockOp {}
        let waiting = BlockOp { log.append("waiting") }
        waiting.addDependency(dependency)
        queue.addOperation(waiting)
        queue.addBarrierBlock { log.append("barrier") }
        blockThread(milliseconds: 10)
        #expect(log.all.isEmpty)
        dependency.start()
        queue.waitUntilAllOperationsAreFinished()
        #expect(log.all == ["waiting", "barrier"])
    }

    @Test func laterOperationThatBecomesReadyStillWaitsForTheBarrier() {
        let queue = OpQueue()
        let log = EventLog<String>()
        let release = Gate()
        queue.addOperation { release.wait(); log.append("before") }
        queue.addBarrierBlock { log.append("barrier") }
        let dependency = BlockOp {}
        let after = BlockOp { log.append("after") }
        after.addDependency(dependency)
        queue.addOperation(after)
        dependency.start()
        blockThread(milliseconds: 10)
        #expect(log.all.isEmpty)
        release.open()
        queue.waitUntilAllOperationsAreFinished()
        #expect(log.all == ["before", "barrier", "after"])
    }

    @Test func barrierWithAnUnderlyingQueueHoldsBackTheNextOperation() {
        let queue = OpQueue()
        queue.underlyingQueue = DispatchQueue(label: "barrier-test", attributes: .concurrent)
        let log = EventLog<String>()
        queue.addBarrierBlock {
            blockThread(milliseconds: 20)
            log.append("barrier")
        }
        queue.addOperation { log.append("after") }
        queue.waitUntilAllOperationsAreFinished()
        #expect(log.all == ["barrier", "after"])
    }
}

@Suite struct BarrierOrderingTests {
    private final class Manual: AsyncOp, @unchecked Sendable {
        // @unchecked Sendable: no state of its own.
        override func execute() {}
    }

    @Test func aLateStaleBarrierEntryCannotHideTheCurrentOne() {
        // The barrier becomes ready and an observer raises its priority (a newer entry) before the
        // thread that made it ready pushes the older entry: the queue must keep the newer one.
        let queue = OpQueue()
        queue.isSuspended = true
        queue.addBarrierBlock {}
        let barrier = queue.operations.last!
        let dependency = Manual()
        dependency.start()
        barrier.addDependency(dependency)
        queue.isSuspended = false
        blockThread(milliseconds: 50)   // the queue tries the barrier and finds it not ready
        queue.isSuspended = true
        let token = barrier.observe(\.isReady, options: [.new]) { op, change in
            if change.newValue == true { op.queuePriority = .high }
        }
        dependency.finish()
        queue.isSuspended = false
        #expect(queueEmpties(queue))
        token.invalidate()
    }
}
