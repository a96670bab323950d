import Testing
import Dispatch
@testable import Operations

/// `Op.timeout`: counted from the start of execution; when it passes first, the operation is
/// cancelled with an `OpTimeoutError`, which reaches a synchronous body through `isCancelled` and
/// an `async` body through its task's cancellation.
@Suite struct TimeoutTests {
    // MARK: Sync bodies

    @Test func timeoutCancelsASyncBodyThatChecksIsCancelled() async {
        let sawCancellation = LockedBox(false)
        let op = RecordingOp(name: "polling") { op in
            // Guarded: a timeout that never fires fails the test instead of hanging it.
            let giveUp = ContinuousClock.now + .seconds(30)
            while !op.isCancelled, ContinuousClock.now < giveUp {
                blockThread(milliseconds: 1)
            }
            sawCancellation.withLockedValue { $0 = op.isCancelled }
        }
        op.timeout = .milliseconds(100)
        let elapsed = await Self.timeToFinish(op)

        #expect(sawCancellation.withLockedValue { $0 })
        #expect(op.isCancelled)
        #expect(op.isFinished)
        #expect(elapsed >= Self.atLeast(.milliseconds(100)))
        #expect(elapsed < .seconds(10))
        let error = op.error as? OpTimeoutError
        #expect(error != nil, "error is \(String(describing: op.error))")
        #expect(error?.timeout == .milliseconds(100))
        #expect(error?.operation == op.description)
    }

    // MARK: Async bodies

    @Test func timeoutCancelsTheTaskOfAnAsyncBody() async {
        let thrownBySleep = LockedBox<(any Error)?>(nil)
        let op = AsyncOp {
            do {
                try await Task.sleep(for: .seconds(120))
            } catch {
                thrownBySleep.withLockedValue { $0 = error }
                throw error
            }
        }
        op.name = "sleeper"
        op.timeout = .milliseconds(100)
        let elapsed = await Self.timeToFinish(op)

        // The sleep ended early, with the task's cancellation…
        #expect(elapsed < .seconds(60))   // the body's task may wait for a thread to start
        #expect(thrownBySleep.withLockedValue { $0 } is CancellationError)
        // …but the operation keeps the timeout error it was cancelled with (the first error wins
        // over the CancellationError the body threw).
        #expect(op.isCancelled)
        let error = op.error as? OpTimeoutError
        #expect(error != nil, "error is \(String(describing: op.error))")
        #expect(error?.timeout == .milliseconds(100))
        #expect(error?.operation == op.description)
    }

    @Test func timeoutFinishesACallbackStyleOperationThatEndsOnCancellation() async {
        let op = FinishesWhenCancelledOp()
        op.timeout = .milliseconds(100)
        let elapsed = await Self.timeToFinish(op)

        #expect(op.didStart)
        #expect(op.isCancelled)
        #expect(elapsed >= Self.atLeast(.milliseconds(100)))
        #expect(elapsed < .seconds(10))
        #expect((op.error as? OpTimeoutError)?.timeout == .milliseconds(100))
    }

    // MARK: When the timeout does not apply

    @Test func operationThatFinishesInTimeIsNeitherCancelledNorFailed() async throws {
        let op = BlockOp {}
        op.timeout = .milliseconds(250)
        let queue = OpQueue()
        queue.addOperation(op)
        await op.waitUntilFinished()
        // Well past the moment the timeout would have fired.
        try await Task.sleep(for: .milliseconds(500))

        #expect(op.isFinished)
        #expect(!op.isCancelled)
        #expect(op.error == nil)
        #expect(op.timeout == .milliseconds(250))
    }

    @Test func timeoutCountsFromTheStartOfExecutionNotFromQueueing() async throws {
        let release = Gate()
        let dependency = AsyncOp {
            await release.waitOffThread()
        }
        let op = BlockOp {}
        op.timeout = .milliseconds(250)
        op.addDependency(dependency)
        let queue = OpQueue()
        await queue.addOperations([dependency, op], waitUntilFinished: false)

        // The operation waits in the queue three times as long as its timeout.
        try await Task.sleep(for: .milliseconds(750))
        #expect(!op.isCancelled)
        #expect(!op.isExecuting)
        release.open()
        await op.waitUntilFinished()

        #expect(!op.isCancelled)
        #expect(op.error == nil)
    }

    @Test func timeoutClearedBeforeTheStartDoesNotApply() async {
        let op = RecordingOp { op in
            // Runs well past the cleared timeout, unless it is cancelled.
            let end = ContinuousClock.now + .milliseconds(400)
            while !op.isCancelled, ContinuousClock.now < end {
                blockThread(milliseconds: 1)
            }
        }
        op.timeout = .milliseconds(50)
        op.timeout = nil
        let queue = OpQueue()
        queue.addOperation(op)
        await op.waitUntilFinished()

        #expect(op.timeout == nil)
        #expect(!op.isCancelled)
        #expect(op.error == nil)
    }

    // MARK: Observers, accessors, error

    @Test func observersHearTheCancellationWithTheTimeoutError() async {
        let cancellations = EventLog<OpTimeoutError?>()
        let finishes = EventLog<OpTimeoutError?>()
        let op = RecordingOp(name: "observed") { op in
            let giveUp = ContinuousClock.now + .seconds(30)
            while !op.isCancelled, ContinuousClock.now < giveUp {
                blockThread(milliseconds: 1)
            }
        }
        op.addObserver(BlockObserver(
            didCancel: { _, error in cancellations.append(error as? OpTimeoutError) },
            didFinish: { _, error in finishes.append(error as? OpTimeoutError) }
        ))
        op.timeout = .milliseconds(100)
        let queue = OpQueue()
        queue.addOperation(op)
        await op.waitUntilFinished()

        let expected = OpTimeoutError(timeout: .milliseconds(100), operation: op.description)
        #expect(cancellations.all == [expected])
        #expect(finishes.all == [expected])
    }

    @Test func timeoutReadsBackWhatWasSet() {
        let op = BlockOp {}
        #expect(op.timeout == nil)
        op.timeout = .seconds(3)
        #expect(op.timeout == .seconds(3))
        op.timeout = .milliseconds(5)
        #expect(op.timeout == .milliseconds(5))
        op.timeout = nil
        #expect(op.timeout == nil)
    }

    @Test func timeoutErrorDescriptionNamesTheOperationAndTheTimeout() async {
        let made = OpTimeoutError(timeout: .seconds(2), operation: "BlockOp \"fetch\"")
        #expect(made.description.contains("BlockOp \"fetch\""))
        #expect(made.description.contains("\(Duration.seconds(2))"))

        // The error of a real timeout names that operation.
        let op = RecordingOp(name: "slow-import") { op in
            let giveUp = ContinuousClock.now + .seconds(30)
            while !op.isCancelled, ContinuousClock.now < giveUp {
                blockThread(milliseconds: 1)
            }
        }
        op.timeout = .milliseconds(50)
        OpQueue().addOperation(op)
        await op.waitUntilFinished()
        let description = (op.error as? OpTimeoutError)?.description ?? ""
        #expect(description.contains("\"slow-import\""), "description: \(description)")
        #expect(description.contains("\(Duration.milliseconds(50))"), "description: \(description)")
    }

    // MARK: Helpers

    /// Runs `op` in a new queue and returns the time from adding it to its finish, read in its
    /// completion block (not when this task resumes, which may be late on a busy pool).
    private static func timeToFinish(_ op: Op) async -> Duration {
        let finished = finishTimes(of: op)
        let start = ContinuousClock.now
        OpQueue().addOperation(op)
        await op.waitUntilFinished()
        return (finished.all.first ?? .now) - start
    }

    /// The least time a timeout of `timeout` can take, measured with the continuous clock: the
    /// Dispatch timer behind it keeps time with a clock of its own, which may differ by a hair.
    private static func atLeast(_ timeout: Duration) -> Duration {
        timeout - .milliseconds(5)
    }
}

/// A callback-style asynchronous operation whose work never ends by itself: it finishes when it
/// is cancelled (as a network request cancelled through its handle would).
private final class FinishesWhenCancelledOp: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: `state` is a locked box; the rest is the superclass's.
    private let state = LockedBox((started: false, ended: false))

    var didStart: Bool { state.withLockedValue { $0.started } }

    override func execute() {
        // Cancelled before the start was noted: `cancel()` left the finish to this call.
        let endNow = state.withLockedValue { state -> Bool in
            state.started = true
            guard isCancelled, !state.ended else { return false }
            state.ended = true
            return true
        }
        if endNow { finish() }
    }

    override func cancel() {
        super.cancel()
        let endNow = state.withLockedValue { state -> Bool in
            guard state.started, !state.ended else { return false }
            state.ended = true
            return true
        }
        if endNow { finish() }
    }
}
