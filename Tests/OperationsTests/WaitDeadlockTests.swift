import Testing
import Dispatch
@testable import Operations

/// Waits that could never return trap with an explanation instead of freezing.
@Suite struct WaitDeadlockTests {
    @Test(.oneExitTestAtATime) func waitingForItselfTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            let op = RecordingOp(name: "self-waiter") { op in op.waitUntilFinished() }
            queue.addOperation(op)
            await queue.waitUntilAllOperationsAreFinished()
        }
        expectStandardError(of: result, toContain: ["\"self-waiter\"", "from inside its own body", "completion block"])
    }

    @Test(.oneExitTestAtATime) func waitingInAWidthOneQueueForAnOperationBehindTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.name = "serial"
            queue.maxConcurrentOperationCount = 1
            let behind = BlockOp {}
            behind.name = "behind"
            let first = RecordingOp(name: "first") { _ in behind.waitUntilFinished() }
            await queue.addOperations([first, behind], waitUntilFinished: false)
            await queue.waitUntilAllOperationsAreFinished()
        }
        expectStandardError(of: result, toContain: [
            "\"behind\"", "\"first\"", "OpQueue \"serial\"", "width 1", "dependency of a new operation",
            // The queue's dump lines that show both (see QueueDump).
            "OpQueue \"serial\" (max concurrent: 1, suspended: no): 2 operations, 1 running\n",
            "  ▶ executing  RecordingOp \"first\" (priority: normal)\n",
            "  ⏸ ready      BlockOp \"behind\" (priority: normal) — for a slot: 1 of 1 running",
        ])
    }

    @Test(.oneExitTestAtATime) func addingAndWaitingFromInsideAWidthOneQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.maxConcurrentOperationCount = 1
            let outer = RecordingOp(name: "outer") { _ in
                let inner = BlockOp {}
                inner.name = "inner"
                OpQueue.current!.addOperations([inner], waitUntilFinished: true)
            }
            queue.addOperation(outer)
            await queue.waitUntilAllOperationsAreFinished()
        }
        expectStandardError(of: result, toContain: ["\"inner\"", "\"outer\"", "width 1"])
    }

    @Test(.oneExitTestAtATime) func waitingForADependentTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.name = "pair"
            let later = BlockOp {}
            later.name = "later"
            let waiter = RecordingOp(name: "waiter") { _ in later.waitUntilFinished() }
            later.addDependency(waiter)
            await queue.addOperations([waiter, later], waitUntilFinished: false)
            await queue.waitUntilAllOperationsAreFinished()
        }
        expectStandardError(of: result, toContain: [
            "\"later\"", "\"waiter\"", "depends on",
            // Followed by the dump lines of both.
            "Remove the wait or the dependency.\nOpQueue \"pair\"",
            "  ⏸ waiting    BlockOp \"later\" (priority: normal) — for dependencies: RecordingOp \"waiter\" (executing)",
        ])
    }

    @Test(.oneExitTestAtATime) func waitingForTheWholeQueueFromInsideItTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.name = "busy"
            let op = RecordingOp(name: "inside") { _ in OpQueue.current!.waitUntilAllOperationsAreFinished() }
            queue.addOperation(op)
            await op.waitUntilFinished()
        }
        expectStandardError(of: result, toContain: [
            "OpQueue \"busy\"", "\"inside\"", "cannot empty", "addBarrierBlock",
            // Followed by the queue's dump.
            "OpQueue \"busy\" (max concurrent: default, suspended: no): 1 operation, 1 running\n  ▶ executing  RecordingOp \"inside\" (priority: normal)",
        ])
    }

    @Test(.oneExitTestAtATime) func waitingOnTheMainQueueForAMainQueueOperationTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.main.async {
                let op = BlockOp {}
                op.name = "ui-update"
                OpQueue.main.addOperation(op)
                op.waitUntilFinished()
                done.signal()
            }
            done.wait()
        }
        expectStandardError(of: result, toContain: ["\"ui-update\"", "OpQueue.main", "main thread", "completion block"])
    }

    @Test(.oneExitTestAtATime) func waitingForAllOfTheMainQueueOnTheMainQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.main.async {
                OpQueue.main.isSuspended = true
                OpQueue.main.addOperation {}
                OpQueue.main.waitUntilAllOperationsAreFinished()
                done.signal()
            }
            done.wait()
        }
        expectStandardError(of: result, toContain: ["OpQueue.main", "main thread", "barrier"])
    }

    @Test func waitingInAWiderQueueForAQueuedOperationIsAllowed() {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 2
        let behind = BlockOp {}
        let first = BlockOp { behind.waitUntilFinished() }
        queue.addOperations([first, behind], waitUntilFinished: true)
        #expect(first.isFinished && behind.isFinished)
    }

    @Test func waitingForAnOperationOfAnotherQueueIsAllowed() {
        let first = OpQueue()
        first.maxConcurrentOperationCount = 1
        let second = OpQueue()
        let other = BlockOp { blockThread(milliseconds: 5) }
        let waiter = BlockOp { other.waitUntilFinished() }
        first.addOperation(waiter)
        second.addOperation(other)
        first.waitUntilAllOperationsAreFinished()
        #expect(waiter.isFinished && other.isFinished)
    }

    @Test func theMainThreadIsRecognised() {
        // The test runs on a worker thread; `dispatchMain()` has retired the main thread.
        #expect(!WaitDeadlocks.isMainThread)
    }
}
