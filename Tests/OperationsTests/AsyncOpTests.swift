import Dispatch
import Testing
@testable import Operations

/// An asynchronous operation whose `execute()` hands the work to another thread, which calls
/// `finish()` once the test opens `release`.
private final class HandOffOp: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: its stored properties are `let`s of Sendable types.
    let log: EventLog<String>
    let executed = Gate()
    let release = Gate()

    init(name: String, log: EventLog<String>) {
        self.log = log
        super.init()
        self.name = name
    }

    override func execute() {
        log.append("\(name!) execute")
        executed.open()
        DispatchQueue.global().async {
            _ = self.release.wait()
            self.log.append("\(self.name!) finish")
            self.finish()
        }
    }
}

/// An asynchronous operation that finishes inside `execute()`, on the starting thread.
private final class ImmediateOp: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: `executions` is a Sendable `let`.
    let executions = EventLog<Int>()

    override func execute() {
        executions.append(1)
        finish()
    }
}

/// An asynchronous operation whose `execute()` only records that it was called.
private final class NeverFinishingOp: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: `executions` is a Sendable `let`.
    let executions = EventLog<Int>()

    override func execute() {
        executions.append(1)
    }
}

@Suite struct AsyncOpTests {
    @Test func isAsynchronousAndConcurrentAreTrue() {
        let op = ImmediateOp()
        #expect(op.isAsynchronous)
        #expect(op.isConcurrent)
        #expect(!BlockOp {}.isAsynchronous)
    }

    @Test func startReturnsWhileExecutingUntilAnotherThreadCallsFinish() {
        let log = EventLog<String>()
        let op = HandOffOp(name: "handoff", log: log)
        op.start()
        #expect(log.all == ["handoff execute"])
        #expect(op.isExecuting)
        #expect(!op.isFinished)
        op.release.open()
        op.waitUntilFinished()
        #expect(op.isFinished)
        #expect(!op.isExecuting)
        #expect(log.all == ["handoff execute", "handoff finish"])
    }

    @Test func observersSeeExecutingUntilFinishThenFinished() {
        let log = EventLog<String>()
        let op = HandOffOp(name: "observed", log: log)
        let tokens = [
            op.observe(\.isExecuting, options: [.new]) { _, change in log.append("isExecuting \(change.newValue!)") },
            op.observe(\.isFinished, options: [.new]) { _, change in log.append("isFinished \(change.newValue!)") },
        ]
        op.start()
        #expect(log.all == ["isExecuting true", "observed execute"])
        op.release.open()
        op.waitUntilFinished()
        #expect(log.all == ["isExecuting true", "observed execute", "observed finish", "isExecuting false", "isFinished true"])
        tokens.forEach { $0.invalidate() }
    }

    @Test func finishingInsideExecuteFinishesBeforeStartReturns() {
        let op = ImmediateOp()
        op.start()
        #expect(op.isFinished)
        #expect(op.executions.count == 1)
    }

    @Test func dependentBecomesReadyOnlyWhenFinishIsCalled() {
        let log = EventLog<String>()
        let op = HandOffOp(name: "first", log: log)
        let dependent = BlockOp {}
        dependent.addDependency(op)
        op.start()
        #expect(!dependent.isReady)
        let ready = Gate()
        let token = dependent.observe(\.isReady, options: [.new]) { _, _ in ready.open() }
        op.release.open()
        #expect(ready.wait())
        #expect(dependent.isReady)
        op.waitUntilFinished()
        token.invalidate()
    }

    @Test func holdsItsWidthOneQueueSlotUntilFinish() {
        // A serial Dispatch queue under the operation queue makes the drainers observable:
        // once `underlying.sync {}` returns, every drainer requested before it has run.
        let underlying = DispatchQueue(label: "AsyncOpTests.underlying")
        let queue = OpQueue()
        queue.underlyingQueue = underlying
        queue.maxConcurrentOperationCount = 1
        let log = EventLog<String>()
        let first = HandOffOp(name: "first", log: log)
        let second = RecordingOp(name: "second") { _ in
            log.append("second runs, first finished: \(first.isFinished)")
        }
        queue.addOperations([first, second], waitUntilFinished: false)
        #expect(first.executed.wait())
        underlying.sync {}
        underlying.sync {}
        // The drainers have all run: the second operation did not start, first still executes.
        #expect(log.all == ["first execute"])
        #expect(first.isExecuting)
        #expect(!second.isExecuting && !second.isFinished)
        first.release.open()
        queue.waitUntilAllOperationsAreFinished()
        #expect(log.all == ["first execute", "first finish", "second runs, first finished: true"])
    }

    @Test func secondOperationOfAWidthOneQueueStartsAfterFinish() {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let log = EventLog<String>()
        let first = HandOffOp(name: "first", log: log)
        let second = RecordingOp(name: "second") { _ in
            log.append("second runs, first finished: \(first.isFinished)")
        }
        queue.addOperation(first)
        #expect(first.executed.wait())
        queue.addOperation(second)
        first.release.open()
        queue.waitUntilAllOperationsAreFinished()
        #expect(log.all == ["first execute", "first finish", "second runs, first finished: true"])
    }

    @Test func asyncOpsFinishingInsideExecuteAllRunInAWidthOneQueue() {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let ops = (0..<200).map { _ in ImmediateOp() }
        queue.addOperations(ops, waitUntilFinished: true)
        #expect(ops.allSatisfy { $0.isFinished && $0.executions.count == 1 })
        queue.waitUntilAllOperationsAreFinished()
        #expect(queue.operationCount == 0)
    }

    @Test func cancelledBeforeStartingNeverExecutesAndGoesStraightToFinished() {
        let op = NeverFinishingOp()
        let log = EventLog<String>()
        let tokens = [
            op.observe(\.isExecuting, options: [.new]) { _, change in log.append("isExecuting \(change.newValue!)") },
            op.observe(\.isFinished, options: [.new]) { _, change in log.append("isFinished \(change.newValue!)") },
        ]
        op.cancel()
        op.start()
        #expect(op.executions.count == 0)
        #expect(op.isFinished)
        #expect(!op.isExecuting)
        #expect(log.all == ["isFinished true"])
        op.waitUntilFinished()
        tokens.forEach { $0.invalidate() }
    }

    @Test func cancelledQueuedOpNeverExecutesAndFreesItsSlot() {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        queue.isSuspended = true
        let cancelled = NeverFinishingOp()
        let after = RecordingOp {  _ in }
        queue.addOperations([cancelled, after], waitUntilFinished: false)
        cancelled.cancel()
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(cancelled.executions.count == 0)
        #expect(cancelled.isFinished)
        #expect(after.isFinished)
    }

    @Test func cancellingARunningAsyncOpLeavesItExecutingUntilFinish() {
        let log = EventLog<String>()
        let op = HandOffOp(name: "running", log: log)
        op.start()
        op.cancel()
        #expect(op.isCancelled)
        #expect(op.isExecuting)
        #expect(!op.isFinished)
        op.release.open()
        op.waitUntilFinished()
        #expect(op.isFinished)
    }

    // MARK: Misuse

    @Test(.oneExitTestAtATime) func finishingTwiceTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = ImmediateOp()
            op.name = "twice-finished"
            op.start()
            op.finish()
        }
        expectStandardError(of: result, toContain: ["twice-finished", "finish() was called twice"])
    }

    @Test(.oneExitTestAtATime) func finishingBeforeStartTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = NeverFinishingOp()
            op.name = "early-finish"
            op.finish()
        }
        expectStandardError(of: result, toContain: ["early-finish", "before it started executing"])
    }

    @Test(.oneExitTestAtATime) func finishingACancelledOpThatNeverExecutedTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = NeverFinishingOp()
            op.name = "cancelled-finish"
            op.cancel()
            op.start()
            op.finish()
        }
        expectStandardError(of: result, toContain: ["cancelled-finish"])
    }

    @Test(.oneExitTestAtATime)
    func finishingACancelledOpThatNeverExecutedSaysItNeverStarted() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = NeverFinishingOp()
            op.name = "cancelled-finish"
            op.cancel()
            op.start()
            op.finish()
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        // finish() was called once, and execute() never was: "called twice" misleads.
        #expect(!text.contains("called twice"))
        #expect(text.contains("execute()"))
    }
}
