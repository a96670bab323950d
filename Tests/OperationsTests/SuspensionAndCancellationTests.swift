import Testing
import Dispatch
@testable import Operations

@Suite struct SuspensionAndCancellationTests {
    @Test func suspendedQueueStartsNothing() {
        let queue = OpQueue()
        queue.isSuspended = true
        let ran = LockedBox(false)
        queue.addOperation { ran.withLockedValue { $0 = true } }
        blockThread(milliseconds: 20)
        #expect(!ran.withLockedValue { $0 })
        #expect(queue.operationCount == 1)
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(ran.withLockedValue { $0 })
    }

    @Test func suspendingDoesNotInterruptRunningOperations() {
        let queue = OpQueue()
        let started = Gate()
        let proceed = Gate()
        let finished = LockedBox(false)
        let laterRan = LockedBox(false)
        queue.addOperation {
            started.open()
            proceed.wait()
            finished.withLockedValue { $0 = true }
        }
        #expect(started.wait())
        queue.isSuspended = true
        queue.addOperation { laterRan.withLockedValue { $0 = true } }
        proceed.open()
        #expect(eventually { finished.withLockedValue { $0 } })
        blockThread(milliseconds: 10)
        #expect(!laterRan.withLockedValue { $0 })
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(laterRan.withLockedValue { $0 })
    }

    @Test func cancelAllOperationsCancelsQueuedAndExecuting() {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let started = Gate()
        let sawCancel = LockedBox(false)
        let executing = RecordingOp { op in
            started.open()
            sawCancel.withLockedValue { $0 = eventually { op.isCancelled } }
        }
        let waiting = (0..<5).map { _ in BlockOp { Issue.record("a cancelled operation must not run") } }
        queue.addOperation(executing)
        #expect(started.wait())
        queue.addOperations(waiting, waitUntilFinished: false)
        queue.cancelAllOperations()
        queue.waitUntilAllOperationsAreFinished()
        #expect(sawCancel.withLockedValue { $0 })
        #expect(waiting.allSatisfy { $0.isCancelled && $0.isFinished })
    }

    /// An executing operation that finishes inside its own `cancel()`, and then gives the queue
    /// time to start the next one: the slot it frees must find every waiting operation
    /// cancelled already.
    private final class FinishesWhenCancelled: AsyncOp, @unchecked Sendable {
        // @unchecked Sendable: the gate is Sendable and set once, in `init`.
        let started = Gate()

        override func execute() {
            started.open()
        }

        override func cancel() {
            super.cancel()
            finish()
            blockThread(milliseconds: 50)
        }
    }

    @Test func cancelAllOperationsCancelsTheWaitingOnesBeforeTheExecutingOnes() {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let ran = EventLog<Int>()
        let executing = FinishesWhenCancelled()
        let waiting = (0..<5).map { index in BlockOp { ran.append(index) } }
        queue.addOperation(executing)
        #expect(executing.started.wait())
        queue.addOperations(waiting, waitUntilFinished: false)
        queue.cancelAllOperations()
        queue.waitUntilAllOperationsAreFinished()
        #expect(ran.all.isEmpty, "ran after cancelAllOperations(): \(ran.all)")
        #expect(waiting.allSatisfy { $0.isCancelled && $0.isFinished })
    }

    @Test func cancelledOperationsInASuspendedQueueLeaveWhenItResumes() {
        let queue = OpQueue()
        queue.isSuspended = true
        let ops = (0..<3).map { _ in BlockOp { Issue.record("a cancelled operation must not run") } }
        queue.addOperations(ops, waitUntilFinished: false)
        queue.cancelAllOperations()
        #expect(ops.allSatisfy { $0.isCancelled && $0.isReady && !$0.isFinished })
        blockThread(milliseconds: 10)
        #expect(queue.operationCount == 3)
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(queue.operationCount == 0)
        #expect(ops.allSatisfy { $0.isFinished })
    }

    @Test func cancellingAWaitingOperationMakesItReadyAndItFinishesAtOnce() {
        let queue = OpQueue()
        let never = BlockOp {}
        let waiting = BlockOp { Issue.record("a cancelled operation must not run") }
        waiting.addDependency(never)
        queue.addOperation(waiting)
        #expect(!waiting.isReady)
        waiting.cancel()
        #expect(waiting.isReady)
        waiting.waitUntilFinished()
        #expect(waiting.isFinished)
        #expect(!never.isFinished)
    }

    @Test func waitUntilAllOperationsAreFinishedOnAnEmptyQueueReturnsAtOnce() {
        let queue = OpQueue()
        queue.waitUntilAllOperationsAreFinished()
        #expect(queue.operationCount == 0)
    }

    @Test func operationCountIsZeroWhenTheWaitReturns() {
        let queue = OpQueue()
        for _ in 0..<200 {
            queue.addOperation { blockThread(milliseconds: 0) }
        }
        queue.waitUntilAllOperationsAreFinished()
        #expect(queue.operationCount == 0)
        #expect(queue.operations.isEmpty)
    }
}
