import Testing
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
@testable import Operations

@Suite struct CompletionBlockTests {
    @Test func completionBlockRunsOnceAfterFinishingAndIsCleared() {
        let calls = LockedBox(0)
        let finishedWhenCalled = LockedBox(false)
        let op = BlockOp {}
        op.completionBlock = { [unowned op] in
            calls.withLockedValue { $0 += 1 }
            finishedWhenCalled.withLockedValue { $0 = op.isFinished }
        }
        let queue = OpQueue()
        queue.addOperation(op)
        op.waitUntilFinished()
        #expect(calls.withLockedValue { $0 } == 1)
        #expect(finishedWhenCalled.withLockedValue { $0 })
        #expect(op.completionBlock == nil)
    }

    @Test func completionBlockRunsForACancelledOperation() {
        let called = Gate()
        let op = BlockOp { Issue.record("a cancelled operation must not run") }
        op.completionBlock = { called.open() }
        op.cancel()
        let queue = OpQueue()
        queue.addOperation(op)
        #expect(called.wait())
        #expect(op.isFinished)
    }

    @Test func completionBlockRunsOffTheOperationsThread() {
        let bodyThread = LockedBox<pthread_t?>(nil)
        let sameThread = LockedBox<Bool?>(nil)
        let op = BlockOp { bodyThread.withLockedValue { $0 = pthread_self() } }
        op.completionBlock = {
            let body = bodyThread.withLockedValue { $0 }!
            sameThread.withLockedValue { $0 = pthread_equal(body, pthread_self()) != 0 }
        }
        op.start()
        op.waitUntilFinished()
        #expect(sameThread.withLockedValue { $0 } == false)
    }

    @Test func waitsReturnOnlyAfterTheCompletionBlockReturned() {
        let done = LockedBox(false)
        let op = BlockOp {}
        op.completionBlock = {
            blockThread(milliseconds: 30)
            done.withLockedValue { $0 = true }
        }
        let queue = OpQueue()
        queue.addOperations([op], waitUntilFinished: true)
        #expect(done.withLockedValue { $0 })
        #expect(queue.operationCount == 0)
    }

    @Test func queueWaitCoversCompletionBlocks() {
        let count = LockedBox(0)
        let queue = OpQueue()
        for _ in 0..<20 {
            let op = BlockOp {}
            op.completionBlock = {
                blockThread(milliseconds: 2)
                count.withLockedValue { $0 += 1 }
            }
            queue.addOperation(op)
        }
        queue.waitUntilAllOperationsAreFinished()
        #expect(count.withLockedValue { $0 } == 20)
    }
}

@Suite struct CompletionBlockLifetimeTests {
    /// Reads the operation's name when it is released.
    private final class Canary: @unchecked Sendable {
        // @unchecked Sendable: immutable.
        let op: Op
        init(_ op: Op) { self.op = op }
        deinit { _ = op.name }
    }

    @Test func replacingACompletionBlockReleasesTheOldOneOutsideTheLock() {
        // Releasing the old block runs deinit code that uses the operation; under the operation's
        // lock it would deadlock.
        let op = BlockOp {}
        do {
            let canary = Canary(op)
            op.completionBlock = { _ = canary }
        }
        op.completionBlock = nil
        #expect(op.completionBlock == nil)
    }

    @Test func aCompletionBlockCanWaitForItsOwnOperation() {
        let returned = Gate()
        let op = BlockOp {}
        op.completionBlock = { [unowned op] in
            op.waitUntilFinished()   // it is finished: returns at once
            returned.open()
        }
        OpQueue().addOperation(op)
        #expect(returned.wait())
    }

    @Test func aCompletionBlockWaitingForItsQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.name = "busy"
            let op = BlockOp {}
            op.name = "done"
            op.completionBlock = { queue.waitUntilAllOperationsAreFinished() }
            queue.addOperation(op)
            try? await Task.sleep(for: .seconds(5))
        }
        expectStandardError(of: result, toContain: ["OpQueue \"busy\"", "completion block", "\"done\"", "cannot empty"])
    }
}
