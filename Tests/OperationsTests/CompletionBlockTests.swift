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

    @Test(.oneExitTestAtATime) func aCompletionBlockWaitingForItsQueueTraps() async {
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

/// A completion block set once the operation reads as finished could never run: it is refused
/// and released at once, so one that captures the operation leaks nothing.
@Suite struct LateCompletionBlockTests {
    /// An object whose release the test can see.
    final class Canary: Sendable {}

    @Test func aCompletionBlockSetAfterTheOperationFinishedIsReleasedAndNeverRuns() {
        weak var released: Canary?
        let op = BlockOp {}
        op.start()
        do {
            let canary = Canary()
            released = canary
            op.completionBlock = { _ = canary; Issue.record("a late completion block ran") }
        }
        #expect(released == nil, "the late completion block is kept")
        #expect(op.completionBlock == nil)
    }

    @Test func aCompletionBlockSetWhileTheOperationFinishesIsReleasedAndNeverRuns() {
        // An observer of isFinished runs while the operation is finishing, before it completes.
        let references = WeakOpBox()
        let refused = Gate()
        do {
            let op = BlockOp {}
            references.set(op)
            let observation = op.observe(\.isFinished) { op, _ in
                op.completionBlock = { _ = op; Issue.record("a late completion block ran") }
                if op.completionBlock == nil { refused.open() }
            }
            let queue = OpQueue()
            queue.addOperation(op)
            #expect(queueEmpties(queue))
            observation.invalidate()
        }
        #expect(refused.wait())
        #expect(eventually { references.operation == nil }, "the operation is kept alive by its late completion block")
    }

    @Test func aCompletionBlockSetBeforeTheOperationFinishesStillRuns() {
        let ran = Gate()
        let op = BlockOp {}
        op.completionBlock = { ran.open() }
        OpQueue().addOperation(op)
        #expect(ran.wait())
    }
}

@Suite struct AsyncOpTaskTests {
    @Test func aTaskThatFinishedTheOperationIsNotKept() async {
        let op = AsyncOp {}
        await OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(!op.holdsTask)
        // The task handle may reach the operation after its body finished it: it is not kept.
        _ = op.keep(Task {})
        #expect(!op.holdsTask)
    }

    @Test func theTaskOfARunningBodyIsKeptUntilItFinishes() async {
        let started = Gate()
        let release = Gate()
        let op = AsyncOp {
            started.open()
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    release.wait()
                    continuation.resume()
                }
            }
        }
        let queue = OpQueue()
        queue.addOperation(op)
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                started.wait()
                continuation.resume()
            }
        }
        #expect(eventually { op.holdsTask })
        release.open()
        await op.waitUntilFinished()
        #expect(!op.holdsTask)
    }
}
