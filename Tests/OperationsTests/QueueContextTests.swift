import Testing
import Dispatch
import Synchronization
@testable import Operations

@Suite struct QueueContextTests {
    @Test func currentIsTheQueueRunningTheOperation() {
        let queue = OpQueue()
        let seen = LockedBox<OpQueue?>(nil)
        queue.addOperation { seen.withLockedValue { $0 = OpQueue.current } }
        queue.waitUntilAllOperationsAreFinished()
        #expect(seen.withLockedValue { $0 } === queue)
    }

    @Test func currentIsNilOutsideOperations() {
        #expect(OpQueue.current == nil)
        let seen = LockedBox<OpQueue?>(OpQueue())
        let op = BlockOp { seen.withLockedValue { $0 = OpQueue.current } }
        op.start()
        #expect(seen.withLockedValue { $0 } == nil)
    }

    @Test func mainQueueRunsOperationsOnTheMainDispatchQueue() {
        // On Linux, once the main thread has handed itself to Dispatch (as Swift's async entry
        // points do), the main queue is served by another thread; what the queue guarantees is
        // that its operations run on `DispatchQueue.main`, one at a time.
        let key = DispatchSpecificKey<String>()
        DispatchQueue.main.setSpecific(key: key, value: "main")
        let seen = EventLog<String?>()
        let current = LockedBox<OpQueue?>(nil)
        let meter = ConcurrencyMeter()
        var ops: [Op] = []
        for _ in 0..<5 {
            ops.append(BlockOp {
                meter.enter()
                seen.append(DispatchQueue.getSpecific(key: key))
                current.withLockedValue { $0 = OpQueue.current }
                meter.leave()
            })
        }
        OpQueue.main.addOperations(ops, waitUntilFinished: true)
        #expect(seen.all == Array(repeating: "main", count: 5))
        #expect(meter.peak == 1)
        #expect(current.withLockedValue { $0 } === OpQueue.main)
        #expect(OpQueue.main.maxConcurrentOperationCount == 1)
        #expect(OpQueue.main.underlyingQueue?.label == DispatchQueue.main.label)
        #expect(OpQueue.main.qualityOfService == .userInteractive)
    }

    @Test func operationsRunOnTheUnderlyingQueue() {
        let key = DispatchSpecificKey<String>()
        let dispatchQueue = DispatchQueue(label: "underlying", attributes: .concurrent)
        dispatchQueue.setSpecific(key: key, value: "underlying")
        let queue = OpQueue()
        queue.underlyingQueue = dispatchQueue
        #expect(queue.underlyingQueue === dispatchQueue)
        let seen = EventLog<String?>()
        for _ in 0..<5 {
            queue.addOperation { seen.append(DispatchQueue.getSpecific(key: key)) }
        }
        queue.waitUntilAllOperationsAreFinished()
        #expect(seen.all == Array(repeating: "underlying", count: 5))
    }

    @Test func underlyingQueueCanChangeOnceTheQueueIsEmpty() {
        let queue = OpQueue()
        queue.addOperation {}
        queue.waitUntilAllOperationsAreFinished()
        let dispatchQueue = DispatchQueue(label: "later")
        queue.underlyingQueue = dispatchQueue
        #expect(queue.underlyingQueue === dispatchQueue)
        queue.underlyingQueue = nil
        #expect(queue.underlyingQueue == nil)
    }

    @Test func progressCountsFinishedOperationsOnceTotalIsSet() {
        let queue = OpQueue()
        queue.addOperation {}
        queue.waitUntilAllOperationsAreFinished()
        #expect(queue.progress.completedUnitCount == 0)
        queue.progress.totalUnitCount = 4
        #expect(queue.progress.fractionCompleted == 0)
        for _ in 0..<4 { queue.addOperation {} }
        queue.waitUntilAllOperationsAreFinished()
        #expect(queue.progress.completedUnitCount == 4)
        #expect(queue.progress.fractionCompleted == 1)
        #expect(queue.progress.isFinished)
        #expect(queue.progress.description == "4 of 4")
    }

    @Test(arguments: [false, true])
    func aQueueOnASerialDispatchQueueHandsItBackBetweenOperations(mainQueue: Bool) {
        // 300 ready operations of 1 ms: a block submitted to the same Dispatch queue runs after a
        // slice of about a millisecond, not after all of them. (A slice is measured in time: on a
        // loaded machine, under a checked or sanitized build, it may cover a few more operations,
        // so the bound is far below "all of them" rather than near one slice.)
        let dispatchQueue = mainQueue ? DispatchQueue.main : DispatchQueue(label: "shared serial queue")
        let queue = mainQueue ? OpQueue.main : OpQueue()
        if !mainQueue {
            queue.underlyingQueue = dispatchQueue
            queue.maxConcurrentOperationCount = 1
        }
        let finished = Atomic(0)
        let count = 300
        queue.isSuspended = true
        for _ in 0..<count {
            queue.addOperation {
                blockThread(milliseconds: 1)
                finished.add(1, ordering: .relaxed)
            }
        }
        let finishedBeforeBlock = LockedBox(-1)
        let blockRan = Gate()
        queue.isSuspended = false
        dispatchQueue.async {
            finishedBeforeBlock.withLockedValue { $0 = finished.load(ordering: .relaxed) }
            blockRan.open()
        }
        #expect(blockRan.wait())
        let before = finishedBeforeBlock.withLockedValue { $0 }
        #expect(before < count / 3, "the block waited for \(before) of \(count) operations")
        #expect(queueEmpties(queue))
        #expect(finished.load(ordering: .relaxed) == count)
    }
}
