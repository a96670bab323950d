import Testing
@testable import Operations

private struct NoToken: Error, Equatable {}
private struct Flaky: Error {}

/// Injection into a `RetryOp` (every attempt gets the input) and into a `DelayOp` (its duration).
@Suite struct InjectionReachesFurtherTests {
    @Test func everyAttemptGetsTheRetrysInput() async throws {
        let tokens = EventLog<String>()
        let signIn = ResultOp { "token-1" }
        let upload = TypedRetryOp(maxAttempts: 3, input: signIn) { attempt, token in
            ResultOp<Int> {
                tokens.append(token)
                if attempt < 3 { throw Flaky() }
                return attempt
            }
        }
        #expect(upload.dependencies.map(ObjectIdentifier.init) == [ObjectIdentifier(signIn)])
        await OpQueue().addOperations([signIn, upload], waitUntilFinished: true)
        #expect(try await upload.value == 3)
        #expect(tokens.all == ["token-1", "token-1", "token-1"])
    }

    @Test func aFailedInputCancelsTheRetryBeforeAnyAttempt() async {
        let made = EventLog<Int>()
        let signIn = ResultOp<String> { throw NoToken() }
        let upload = RetryOp(maxAttempts: 3, input: signIn) { attempt, _ in
            made.append(attempt)
            return BlockOp {}
        }
        await OpQueue().addOperations([signIn, upload], waitUntilFinished: true)
        #expect(upload.isCancelled)
        #expect((upload.error as? InjectionError)?.underlyingError as? NoToken == NoToken())
        #expect(made.count == 0 && upload.attemptCount == 0)
    }

    @Test func aDelayWaitsAsLongAsItsProducerSaysOnItsClock() async {
        let clock = ManualClock()
        let ask = ResultOp { Duration.seconds(30) }
        let pause = DelayOp(for: ask)
        pause.clock = clock
        let queue = OpQueue()
        await queue.addOperations([ask, pause], waitUntilFinished: false)
        #expect(await clock.waitForSleepers(1))
        #expect(pause.duration == .seconds(30))
        #expect(pause.isExecuting)
        clock.advance(by: .seconds(29))
        try? await Task.sleep(for: .milliseconds(20))
        #expect(!pause.isFinished)
        clock.advance(by: .seconds(1))
        #expect(await eventuallyAsync { pause.isFinished })
        #expect(!pause.isCancelled)
    }

    @Test func aDelayWhoseProducerFailedDoesNotWait() async {
        let ask = ResultOp<Duration> { throw NoToken() }
        let pause = DelayOp(for: ask)
        await OpQueue().addOperations([ask, pause], waitUntilFinished: true)
        #expect(pause.isCancelled && pause.error is InjectionError)
    }

    @Test func aDelaysWaitCanBeSetUntilItStarts() async {
        let pause = DelayOp(for: .seconds(60))
        pause.duration = .zero
        #expect(pause.duration == .zero && pause.deadline == nil)
        pause.deadline = .now
        #expect(pause.duration == nil && pause.deadline != nil)
        await OpQueue().addOperations([pause], waitUntilFinished: true)
        #expect(pause.isFinished && !pause.isCancelled)
    }

    @Test(.oneExitTestAtATime) func settingADelaysDurationAfterItStartedTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let pause = DelayOp(for: .seconds(60))
            OpQueue().addOperation(pause)
            while !pause.isExecuting {}
            pause.duration = .seconds(1)
        }
        expectStandardError(of: result, toContain: ["duration", "after it started"])
    }
}
