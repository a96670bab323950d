import Testing
@testable import Operations

/// `setTimeout(at:)`: the deadline form of `timeout`, on the operation's clock.
@Suite struct TimeoutDeadlineTests {
    private static func untilCancelled() -> AsyncOp {
        AsyncOp { try await Task.sleep(for: .seconds(3600)) }
    }

    @Test func theOperationIsCancelledWhenItsClockReachesTheDeadline() async {
        let clock = ManualClock()
        let op = Self.untilCancelled()
        op.clock = clock
        clock.advance(by: .seconds(5))
        op.setTimeout(at: clock.now.advanced(by: .seconds(10)))
        #expect(op.timeout == nil, "a deadline replaces the relative timeout")
        clock.advance(by: .seconds(4))   // before the start: the deadline is absolute
        OpQueue().addOperation(op)
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(5))
        #expect(!op.isCancelled)
        clock.advance(by: .seconds(1))
        #expect(await eventuallyAsync { op.isFinished })
        let error = op.error as? OpTimeoutError
        #expect(error?.timeout == .seconds(6), "the time that was left when it started")
        #expect(error?.phase == .running)
    }

    @Test func aDeadlineThatPassedBeforeTheStartCancelsTheOperationAsItStarts() async {
        let ran = EventLog<String>()
        let op = BlockOp { ran.append(Op.current?.isCancelled == true ? "cancelled" : "not cancelled") }
        op.setTimeout(at: ContinuousClock.now - .seconds(1))
        await OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(op.isCancelled && op.error is OpTimeoutError)
    }

    @Test func settingTheTimeoutReplacesTheDeadline() async {
        let clock = ManualClock()
        let op = Self.untilCancelled()
        op.clock = clock
        op.setTimeout(at: clock.now.advanced(by: .seconds(1)))
        op.timeout = .seconds(100)
        OpQueue().addOperation(op)
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(50))
        #expect(!op.isCancelled, "the deadline no longer applies")
        clock.advance(by: .seconds(50))
        #expect(await eventuallyAsync { op.isFinished })
        #expect((op.error as? OpTimeoutError)?.timeout == .seconds(100))
    }

    @Test func aDeadlineSetWhileTheOperationRunsCountsFromNow() async {
        let clock = ManualClock()
        let op = Self.untilCancelled()
        op.clock = clock
        OpQueue().addOperation(op)
        #expect(await eventuallyAsync { op.isExecuting })
        op.setTimeout(at: clock.now.advanced(by: .seconds(3)))
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(3))
        #expect(await eventuallyAsync { op.isFinished })
        #expect(op.error is OpTimeoutError)
    }

    @Test(.oneExitTestAtATime) func aDeadlineOfAnotherClockTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = BlockOp {}
            op.setTimeout(at: SuspendingClock.now + .seconds(1))   // the operation's clock is the continuous one
        }
        expectStandardError(of: result, toContain: ["setTimeout(at:)", "another clock", "ContinuousClock"])
    }
}
