import Testing
@testable import Operations

/// `Op.clock`: a clock advanced by hand drives an operation's timeout, a `DelayOp`'s wait and a
/// `RetryOp`'s backoff, with no real waiting; a wait that is no longer needed is cancelled and
/// releases what it holds.
@Suite struct ClockTests {
    struct Failure: Error {}

    /// An `async` body that runs until it is cancelled (a real sleep of an hour, which the
    /// cancellation ends at once).
    static func untilCancelled() -> AsyncOp {
        AsyncOp { try await Task.sleep(for: .seconds(3600)) }
    }

    @Test func theDefaultClockIsTheContinuousClock() {
        let op = BlockOp {}
        #expect(op.clock is ContinuousClock)
        #expect(op.timingClock == nil)
        op.clock = ContinuousClock()   // kept as the default: the fast path
        #expect(op.timingClock == nil)
        let clock = ManualClock()
        op.clock = clock
        #expect(op.clock as? ManualClock === clock)
    }

    @Test func aTimeoutPassesWhenTheTestClockIsAdvancedPastIt() async {
        let clock = ManualClock()
        let op = Self.untilCancelled()
        op.name = "clocked"
        op.clock = clock
        op.timeout = .seconds(10)
        let queue = OpQueue()
        queue.addOperation(op)

        #expect(await clock.waitForSleepers(1))   // armed as it started
        clock.advance(by: .seconds(9))
        #expect(clock.sleeperCount == 1)          // not yet
        #expect(!op.isCancelled)
        clock.advance(by: .seconds(1))
        #expect(await eventuallyAsync { op.isFinished })

        #expect(op.isCancelled)
        let error = op.error as? OpTimeoutError
        #expect(error?.timeout == .seconds(10))
        #expect(error?.phase == .running)
        #expect(error?.operation == op.description)
    }

    @Test func anOperationThatFinishesInTimeCancelsItsClockSleep() async {
        let clock = ManualClock()
        let finished = Gate()
        let op = AsyncOp { _ = await finished.waitOffThread() }
        op.clock = clock
        op.timeout = .seconds(10)
        let queue = OpQueue()
        queue.addOperation(op)
        #expect(await clock.waitForSleepers(1))
        finished.open()
        #expect(await eventuallyAsync { op.isFinished })
        // The timer's task was cancelled with the end of the work: its sleep is gone.
        #expect(await clock.waitUntilNoSleepers())
        #expect(!op.isCancelled)
        #expect(op.error == nil)
    }

    @Test func aDelayForADurationEndsWhenTheTestClockPassesIt() async {
        let clock = ManualClock()
        let delay = DelayOp(for: .seconds(60))
        delay.clock = clock
        let after = BlockOp {}
        after.addDependency(delay)
        let queue = OpQueue()
        await queue.addOperations([delay, after], waitUntilFinished: false)

        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(59))
        #expect(clock.sleeperCount == 1)
        #expect(!delay.isFinished)
        clock.advance(by: .seconds(1))
        #expect(await eventuallyAsync { after.isFinished })
        #expect(delay.isFinished)
        #expect(!delay.isCancelled)
        #expect(delay.error == nil)
    }

    @Test func aRetryOpWaitsItsBackoffOnItsClock() async {
        let clock = ManualClock()
        let retry = RetryOp(maxAttempts: 3, backoff: .constant(.seconds(30))) { attempt in
            AsyncOp { if attempt < 3 { throw Failure() } }
        }
        retry.clock = clock
        let queue = OpQueue()
        queue.addOperation(retry)

        // The wait after attempt 1.
        #expect(await clock.waitForSleepers(1))
        #expect(retry.attemptCount == 1)
        clock.advance(by: .seconds(29))
        #expect(retry.attemptCount == 1)
        clock.advance(by: .seconds(1))
        // The wait after attempt 2.
        #expect(await clock.waitForSleepers(1))
        #expect(retry.attemptCount == 2)
        clock.advance(by: .seconds(30))
        #expect(await eventuallyAsync { retry.isFinished })

        #expect(retry.attemptCount == 3)
        #expect(retry.succeededAttempt != nil)
        #expect(retry.error == nil)
    }

    @Test func aTypedRetryOpWaitsItsBackoffOnItsClock() async throws {
        let clock = ManualClock()
        let retry = TypedRetryOp<Int>(maxAttempts: 2, backoff: .constant(.seconds(5))) { attempt in
            AsyncBlockOp<Int> {
                if attempt == 1 { throw Failure() }
                return 42
            }
        }
        retry.clock = clock
        let queue = OpQueue()
        queue.addOperation(retry)
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(5))
        #expect(try await retry.value == 42)
        #expect(retry.attemptCount == 2)
    }

    @Test func cancellingADelayCancelsItsClockSleepAndReleasesIt() async {
        let clock = ManualClock()
        weak var released: DelayOp?
        do {
            let delay = DelayOp(for: .seconds(3600))
            released = delay
            delay.clock = clock
            let queue = OpQueue()
            queue.addOperation(delay)
            #expect(await clock.waitForSleepers(1))
            delay.cancel()
            #expect(await eventuallyAsync { delay.isFinished })
            #expect(await clock.waitUntilNoSleepers())
            #expect(!queue.operations.contains { $0 === delay })
        }
        // The sleeping task held the delay: cancelled, it ended and let it go.
        #expect(await eventuallyAsync { released == nil })
    }

    @Test func cancellingAnOperationCancelsItsTimeoutSleepAndReleasesIt() async {
        let clock = ManualClock()
        weak var released: AsyncOp?
        do {
            let op = Self.untilCancelled()
            released = op
            op.clock = clock
            op.timeout = .seconds(60)
            op.totalTimeout = .seconds(120)
            let queue = OpQueue()
            queue.addOperation(op)
            #expect(await clock.waitForSleepers(2))   // the timeout and the total timeout
            op.cancel()
            #expect(await eventuallyAsync { op.isFinished })
            #expect(await clock.waitUntilNoSleepers())
            #expect(op.error == nil || op.error is CancellationError)
        }
        #expect(await eventuallyAsync { released == nil })
    }

    @Test(.oneExitTestAtATime) func settingTheClockAfterTheOperationEnteredAQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.isSuspended = true
            let op = BlockOp {}
            op.name = "late-clock"
            queue.addOperation(op)
            op.clock = SuspendingClock()
        }
        expectStandardError(of: result, toContain: ["\"late-clock\"", "clock", "before adding the operation to a queue"])
    }
}
