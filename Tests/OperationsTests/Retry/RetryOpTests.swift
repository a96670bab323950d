import Dispatch
import Testing
@testable import Operations

/// The error an attempt fails with, told apart by the attempt's number.
private struct AttemptFailure: Error, Equatable {
    let attempt: Int
}

/// An attempt that fails with `AttemptFailure(attempt:)` while `attempt < succeedingAttempt`,
/// and then produces `attempt * 100` (synchronous: a `ResultOp`).
private func syncAttempt(_ attempt: Int, succeedingFrom succeedingAttempt: Int) -> ResultOp<Int> {
    ResultOp {
        if attempt < succeedingAttempt { throw AttemptFailure(attempt: attempt) }
        return attempt * 100
    }
}

/// `RetryOp` makes a fresh attempt after each failure until one succeeds, the attempts are used
/// up, `shouldRetry` or the backoff says to stop, or it is cancelled; it waits between attempts
/// without holding a thread. Tests with `async` attempts are `async` and wait with `await`, so
/// that no test blocks a thread of Swift's cooperative pool while an attempt needs a task.
@Suite struct RetryOpTests {

    // MARK: Succeeding

    @Test func succeedsOnTheThirdAttemptAfterExponentialBackoff() async throws {
        let numbers = EventLog<Int>()
        let starts = EventLog<ContinuousClock.Instant>()
        let retry = RetryOp(maxAttempts: 5, backoff: .exponential(initial: .milliseconds(30), multiplier: 2)) { attempt in
            numbers.append(attempt)
            return AsyncBlockOp<Int> {
                starts.append(.now)
                if attempt < 3 { throw AttemptFailure(attempt: attempt) }
                return attempt * 100
            }
        }
        let queue = OpQueue()
        let began = ContinuousClock.now
        queue.addOperation(retry)
        await retry.waitUntilFinished()
        let elapsed = ContinuousClock.now - began

        #expect(elapsed >= .milliseconds(90), "waits of 30 and 60 ms, but it took \(elapsed)")
        #expect(numbers.all == [1, 2, 3])
        let attempts = retry.attempts
        try #require(attempts.count == 3)
        #expect(retry.succeededAttempt === attempts[2])
        #expect(retry.error == nil)
        #expect(!retry.isCancelled)
        #expect(try retry.output(as: Int.self)?.get() == 300)
        #expect(attempts[0].error as? AttemptFailure == AttemptFailure(attempt: 1))
        #expect(attempts[1].error as? AttemptFailure == AttemptFailure(attempt: 2))
        #expect(attempts.allSatisfy { $0.isFinished })
        // The waits grow: at least 30 ms before attempt 2, 60 ms before attempt 3.
        let times = starts.all
        try #require(times.count == 3)
        #expect(times[1] - times[0] >= .milliseconds(30), "\(times[1] - times[0]) before attempt 2")
        #expect(times[2] - times[1] >= .milliseconds(60), "\(times[2] - times[1]) before attempt 3")
    }

    @Test func retryOfAsyncOpsWithNoBackoffSucceedsOnTheFirstAttempt() async {
        let runs = EventLog<Int>()
        let retry = RetryOp(maxAttempts: 3, backoff: .none) { _ in AsyncOp { runs.append(1) } }
        let queue = OpQueue()
        queue.addOperation(retry)
        await retry.waitUntilFinished()

        #expect(runs.count == 1)
        #expect(retry.attempts.count == 1)
        #expect(retry.succeededAttempt != nil && retry.succeededAttempt === retry.attempts.first)
        #expect(retry.error == nil)
        #expect(retry.maxAttempts == 3)
    }

    @Test func aSyncResultOpThatThrowsIsRetried() async throws {
        let retry = RetryOp(maxAttempts: 4) { attempt in syncAttempt(attempt, succeedingFrom: 2) }
        OpQueue().addOperation(retry)
        await retry.waitUntilFinished()

        #expect(retry.attempts.count == 2)
        #expect(retry.attempts.first?.error as? AttemptFailure == AttemptFailure(attempt: 1))
        #expect(retry.error == nil)
        #expect(try retry.output(as: Int.self)?.get() == 200)
    }

    @Test func aSyncBlockOpThatCancelsItselfWithAnErrorIsRetried() async throws {
        let numbers = EventLog<Int>()
        let retry = RetryOp(maxAttempts: 5) { attempt in
            BlockOp {
                numbers.append(attempt)
                if attempt < 3 {
                    Op.current?.cancel(with: AttemptFailure(attempt: attempt))
                }
            }
        }
        OpQueue().addOperation(retry)
        await retry.waitUntilFinished()

        #expect(numbers.all == [1, 2, 3])
        let attempts = retry.attempts
        try #require(attempts.count == 3)
        #expect(attempts[0].isCancelled && attempts[1].isCancelled)
        #expect(attempts[1].error as? AttemptFailure == AttemptFailure(attempt: 2))
        #expect(retry.succeededAttempt === attempts[2])
        #expect(retry.error == nil)
    }

    // MARK: Giving up

    @Test func usedUpAttemptsFailWithTheLastAttemptsError() async throws {
        let numbers = EventLog<Int>()
        let retry = RetryOp(maxAttempts: 3) { attempt in
            numbers.append(attempt)
            return syncAttempt(attempt, succeedingFrom: 10)
        }
        OpQueue().addOperation(retry)
        await retry.waitUntilFinished()

        #expect(numbers.all == [1, 2, 3])
        #expect(retry.attempts.count == 3)
        #expect(retry.succeededAttempt == nil)
        #expect(!(retry.error is GroupError), "the error is \(String(describing: retry.error))")
        #expect(retry.error as? AttemptFailure == AttemptFailure(attempt: 3))
        #expect(!retry.isCancelled)
        let output = try #require(retry.output(as: Int.self))
        #expect(throws: AttemptFailure(attempt: 3)) { try output.get() }
    }

    @Test func shouldRetryIsAskedWithTheErrorAndAttemptAndFalseStops() async {
        let asked = EventLog<(failed: Int?, attempt: Int)>()
        let retry = RetryOp(maxAttempts: 10, shouldRetry: { error, attempt in
            asked.append(((error as? AttemptFailure)?.attempt, attempt))
            return attempt < 2
        }) { attempt in
            syncAttempt(attempt, succeedingFrom: 10)
        }
        OpQueue().addOperation(retry)
        await retry.waitUntilFinished()

        let questions = asked.all
        #expect(questions.map(\.failed) == [1, 2])
        #expect(questions.map(\.attempt) == [1, 2])
        #expect(retry.attempts.count == 2)
        #expect(retry.succeededAttempt == nil)
        #expect(retry.error as? AttemptFailure == AttemptFailure(attempt: 2))
    }

    @Test func shouldRetryIsNotAskedAfterASuccess() async {
        let asked = EventLog<Int>()
        let retry = RetryOp(maxAttempts: 10, shouldRetry: { _, attempt in
            asked.append(attempt)
            return true
        }) { attempt in
            syncAttempt(attempt, succeedingFrom: 3)
        }
        OpQueue().addOperation(retry)
        await retry.waitUntilFinished()

        #expect(asked.all == [1, 2])
        #expect(retry.attempts.count == 3)
        #expect(retry.error == nil)
    }

    @Test func customBackoffReturningNilStops() async {
        let asked = EventLog<Int>()
        let retry = RetryOp(maxAttempts: 10, backoff: .custom { attempt in
            asked.append(attempt)
            return attempt < 2 ? .milliseconds(10) : nil
        }) { attempt in
            syncAttempt(attempt, succeedingFrom: 10)
        }
        OpQueue().addOperation(retry)
        await retry.waitUntilFinished()

        #expect(asked.all == [1, 2])
        #expect(retry.attempts.count == 2)
        #expect(retry.succeededAttempt == nil)
        #expect(retry.error as? AttemptFailure == AttemptFailure(attempt: 2))
    }

    // MARK: Cancelling

    @Test func cancelledWhileWaitingFinishesAtOnceWithoutAnotherAttempt() async throws {
        let numbers = EventLog<Int>()
        let retry = RetryOp(maxAttempts: 3, backoff: .constant(.seconds(30))) { attempt in
            numbers.append(attempt)
            return syncAttempt(attempt, succeedingFrom: 10)
        }
        OpQueue().addOperation(retry)
        var wait: DelayOp?
        let waiting = await eventuallyAsync {
            wait = retry.children.lazy.compactMap { $0 as? DelayOp }.first { $0.isExecuting }
            return wait != nil
        }
        try #require(waiting, "the RetryOp never started waiting")
        #expect(wait?.name == "wait before attempt 2")
        #expect(wait?.duration == .seconds(30))

        let finished = finishTimes(of: retry)
        let cancelled = ContinuousClock.now
        retry.cancel()
        await retry.waitUntilFinished()
        let elapsed = try #require(finished.all.first) - cancelled

        // Well under the 30 s backoff: the cancel cut the wait short. (Not tighter: in CI's
        // checked build, beside the stress run, the finish once took 7.7 s to be delivered.)
        #expect(elapsed < .seconds(20), "it took \(elapsed) to finish after the cancel")
        #expect(retry.isCancelled)
        #expect(wait?.isFinished == true)
        #expect(retry.succeededAttempt == nil)
        #expect(retry.error as? AttemptFailure == AttemptFailure(attempt: 1))
        // No attempt comes later either.
        try await Task.sleep(for: .milliseconds(50))
        #expect(numbers.all == [1])
        #expect(retry.attempts.count == 1)
    }

    @Test func cancelledWhileAnAttemptRunsCancelsThatAttemptAndMakesNoMore() async throws {
        let numbers = EventLog<Int>()
        let started = EventLog<Int>()
        let sawCancellation = EventLog<Bool>()
        let retry = RetryOp(maxAttempts: 3) { attempt in
            numbers.append(attempt)
            return AsyncOp {
                started.append(attempt)
                do {
                    try await Task.sleep(for: .seconds(30))
                } catch {
                    sawCancellation.append(Task.isCancelled)
                    throw error
                }
            }
        }
        OpQueue().addOperation(retry)
        try #require(await eventuallyAsync { started.count == 1 }, "attempt 1 never started")

        let finished = finishTimes(of: retry)
        let cancelled = ContinuousClock.now
        retry.cancel()
        await retry.waitUntilFinished()
        // The attempt's task must run again to see the cancellation: generous, but far from the
        // 30 s sleep it cut short.
        let elapsed = try #require(finished.all.first) - cancelled

        #expect(elapsed < .seconds(20), "it took \(elapsed) to finish after the cancel")
        #expect(sawCancellation.all == [true])
        #expect(retry.isCancelled)
        let attempts = retry.attempts
        try #require(attempts.count == 1)
        #expect(attempts[0].isCancelled)
        #expect(retry.succeededAttempt == nil)
        try await Task.sleep(for: .milliseconds(50))
        #expect(numbers.all == [1])
        #expect(retry.attempts.count == 1)
    }

    @Test func cancelledBeforeItStartsMakesNoAttempt() async throws {
        let numbers = EventLog<Int>()
        let retry = RetryOp(maxAttempts: 3) { attempt in
            numbers.append(attempt)
            return syncAttempt(attempt, succeedingFrom: 1)
        }
        retry.cancel()
        OpQueue().addOperation(retry)
        await retry.waitUntilFinished()

        #expect(retry.isCancelled)
        #expect(numbers.count == 0)
        #expect(retry.attempts.isEmpty)
        #expect(retry.succeededAttempt == nil)
        let output = try #require(retry.output(as: Int.self))
        #expect(throws: (any Error).self) { try output.get() }
    }

    // MARK: Timeouts

    @Test func eachAttemptTimesOutAndTheRetryFailsWithTheTimeout() async throws {
        let retry = RetryOp(maxAttempts: 2) { _ in
            let attempt = AsyncOp { try await Task.sleep(for: .seconds(120)) }
            attempt.timeout = .milliseconds(50)
            return attempt
        }
        let finished = finishTimes(of: retry)
        let began = ContinuousClock.now
        OpQueue().addOperation(retry)
        await retry.waitUntilFinished()
        let elapsed = try #require(finished.all.first) - began

        #expect(elapsed >= .milliseconds(100), "two attempts of 50 ms each, but it took \(elapsed)")
        // Far from the two 120 s sleeps: both were cut short (an attempt's task may wait for a
        // thread of the cooperative pool to start while other tests hold them).
        #expect(elapsed < .seconds(90), "the attempts were not cut short: \(elapsed)")
        let attempts = retry.attempts
        try #require(attempts.count == 2)
        for attempt in attempts {
            let timedOut = attempt.error as? OpTimeoutError
            #expect(timedOut?.timeout == .milliseconds(50), "attempt error: \(String(describing: attempt.error))")
        }
        #expect(retry.error is OpTimeoutError, "the error is \(String(describing: retry.error))")
        #expect(retry.succeededAttempt == nil)
        #expect(!retry.isCancelled)
    }

    // MARK: Holding no thread

    @Test func waitsBetweenAttemptsHoldNoThread() async throws {
        // Every body runs on one serial Dispatch queue: if a wait held that queue's thread, the
        // 200 waits of 300 ms would take a minute, one after another. The times are taken in the
        // bodies, so a slow resumption of this test's task does not count.
        let count = 200
        let bodies = EventLog<ContinuousClock.Instant>()
        let queue = OpQueue()
        queue.underlyingQueue = DispatchQueue(label: "retry-serial")
        let retries = (0..<count).map { _ in
            RetryOp(maxAttempts: 2, backoff: .constant(.milliseconds(300))) { attempt in
                ResultOp {
                    bodies.append(.now)
                    if attempt == 1 { throw AttemptFailure(attempt: attempt) }
                    return attempt * 100
                }
            }
        }
        await queue.addOperations(retries, waitUntilFinished: true)

        let times = bodies.all
        try #require(times.count == 2 * count)
        let span = times.max()! - times.min()!
        #expect(span >= .milliseconds(300))
        #expect(span < .seconds(30), "200 waits of 300 ms took \(span) (one after another: 60 s)")
        #expect(retries.allSatisfy { $0.error == nil && $0.attempts.count == 2 })
        #expect(retries.allSatisfy { (try? $0.output(as: Int.self)?.get()) == 200 })
    }

    @Test func manyRetriesWaitAtOnceInADefaultQueue() async throws {
        let count = 200
        let firstEnds = EventLog<(index: Int, at: ContinuousClock.Instant)>()
        let secondStarts = EventLog<(index: Int, at: ContinuousClock.Instant)>()
        let queue = OpQueue()
        let retries = (0..<count).map { index in
            RetryOp(maxAttempts: 2, backoff: .constant(.milliseconds(300))) { attempt in
                BlockOp {
                    if attempt == 1 {
                        firstEnds.append((index, .now))
                        Op.current?.cancel(with: AttemptFailure(attempt: attempt))
                    } else {
                        secondStarts.append((index, .now))
                    }
                }
            }
        }
        await queue.addOperations(retries, waitUntilFinished: true)

        #expect(retries.allSatisfy { $0.error == nil && $0.attempts.count == 2 && $0.succeededAttempt === $0.attempts.last })
        let ends = Dictionary(uniqueKeysWithValues: firstEnds.all.map { ($0.index, $0.at) })
        let starts = Dictionary(uniqueKeysWithValues: secondStarts.all.map { ($0.index, $0.at) })
        try #require(ends.count == count && starts.count == count)
        for index in 0..<count {
            let gap = starts[index]! - ends[index]!
            #expect(gap >= .milliseconds(300), "retry \(index) waited only \(gap)")
        }
        let span = starts.values.max()! - ends.values.min()!
        #expect(span < .seconds(30), "200 waits of 300 ms took \(span) (one after another: 60 s)")
    }

    // MARK: Composition

    @Test func retryInAGroupFinishesBeforeTheGroup() async throws {
        let retry = RetryOp(maxAttempts: 3, backoff: .constant(.milliseconds(10))) { attempt in
            syncAttempt(attempt, succeedingFrom: 3)
        }
        let sibling = BlockOp {}
        let retryFinishedFirst = EventLog<Bool>()
        let group = GroupOp(operations: [retry, sibling])
        group.completionBlock = { retryFinishedFirst.append(retry.isFinished) }
        OpQueue().addOperation(group)
        await group.waitUntilFinished()

        #expect(retryFinishedFirst.all == [true])
        #expect(group.error == nil)
        #expect(retry.attempts.count == 3)
        #expect(try retry.output(as: Int.self)?.get() == 300)
        #expect(sibling.isFinished)
    }

    @Test func failedRetryInAGroupGivesTheGroupTheLastAttemptsError() async {
        let retry = RetryOp(maxAttempts: 2) { attempt in syncAttempt(attempt, succeedingFrom: 10) }
        let group = GroupOp(operations: [retry])
        OpQueue().addOperation(group)
        await group.waitUntilFinished()

        let errors = (group.error as? GroupError)?.errors
        #expect(errors?.count == 1)
        #expect(errors?.first as? AttemptFailure == AttemptFailure(attempt: 2))
    }

    @Test func dependentRunsAfterTheFinalAttempt() async {
        let attemptsFinished = EventLog<Int>()
        let retry = RetryOp(maxAttempts: 3, backoff: .constant(.milliseconds(20))) { attempt in
            let op = syncAttempt(attempt, succeedingFrom: 3)
            op.completionBlock = { attemptsFinished.append(attempt) }
            return op
        }
        let seen = EventLog<(retryFinished: Bool, attempts: Int, value: Int?)>()
        let dependent = BlockOp {
            seen.append((retry.isFinished, retry.attempts.count, try? retry.output(as: Int.self)?.get()))
        }
        dependent.addDependency(retry)
        let queue = OpQueue()
        await queue.addOperations([dependent, retry], waitUntilFinished: false)
        await dependent.waitUntilFinished()

        let observed = seen.all
        #expect(observed.count == 1)
        #expect(observed.first?.retryFinished == true)
        #expect(observed.first?.attempts == 3)
        #expect(observed.first?.value == 300)
        #expect(attemptsFinished.all.sorted() == [1, 2, 3])
    }

    // MARK: Output

    @Test func outputIsNilUntilTheRetryFinishes() async throws {
        let started = EventLog<Int>()
        let retry = RetryOp(maxAttempts: 2) { attempt in
            AsyncBlockOp<Int> {
                started.append(attempt)
                try await Task.sleep(for: .seconds(30))
                return attempt
            }
        }
        #expect(retry.output(as: Int.self) == nil)
        OpQueue().addOperation(retry)
        try #require(await eventuallyAsync { started.count == 1 }, "attempt 1 never started")
        #expect(retry.output(as: Int.self) == nil)
        #expect(!retry.isFinished)

        retry.cancel()
        await retry.waitUntilFinished()
        let output = try #require(retry.output(as: Int.self))
        #expect(throws: (any Error).self) { try output.get() }
    }

    @Test func outputIsAFailureWhenNoAttemptSucceeded() async throws {
        let retry = RetryOp(maxAttempts: 2, backoff: .constant(.milliseconds(5))) { attempt in
            AsyncBlockOp<String> { throw AttemptFailure(attempt: attempt) }
        }
        OpQueue().addOperation(retry)
        await retry.waitUntilFinished()

        let output = try #require(retry.output(as: String.self))
        #expect(throws: AttemptFailure(attempt: 2)) { try output.get() }
    }

    // MARK: Misuse

    @Test(.oneExitTestAtATime) func noAttemptsAtAllTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RetryOp(maxAttempts: 0) { _ in BlockOp {} }
        }
        expectStandardError(of: result, toContain: ["maxAttempts 0", "it must make at least one attempt"])
    }

    @Test(.oneExitTestAtATime) func anAttemptThatIsInAQueueAlreadyTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.isSuspended = true
            let queued = BlockOp {}
            queued.name = "queued-attempt"
            queue.addOperation(queued)
            let retry = RetryOp(maxAttempts: 2) { _ in queued }
            retry.start()
        }
        expectStandardError(of: result, toContain: ["makeAttempt of", "\"queued-attempt\"", "in a queue already", "make a new operation for every attempt"])
    }

    @Test(.oneExitTestAtATime) func anAttemptMadeTwiceTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let reused = ResultOp<Int> { throw AttemptFailure(attempt: 0) }
            let retry = RetryOp(maxAttempts: 2) { _ in reused }
            retry.name = "reuser"
            retry.start()
            await retry.waitUntilFinished()
        }
        expectStandardError(of: result, toContain: ["makeAttempt of", "\"reuser\"", "which was an earlier attempt"])
    }

    @Test func aFinishedRetryReleasesItsClosures() async {
        final class Owner: Sendable {}
        weak var weakOwner: Owner?
        let retry: RetryOp
        do {
            let owner = Owner()
            weakOwner = owner
            retry = RetryOp(maxAttempts: 2, shouldRetry: { _, _ in withExtendedLifetime(owner) { true } }) { attempt in
                withExtendedLifetime(owner) { syncAttempt(attempt, succeedingFrom: 2) }
            }
        }
        #expect(weakOwner != nil)
        OpQueue().addOperation(retry)
        await retry.waitUntilFinished()
        #expect(retry.attempts.count == 2 && retry.error == nil)
        #expect(weakOwner == nil, "the RetryOp kept what its closures captured after finishing")
    }

    @Test func progressStaysBelowOneWhileTheRetryWaitsForItsNextAttempt() async throws {
        let retry = RetryOp(maxAttempts: 2, backoff: .constant(.seconds(30))) { attempt in
            syncAttempt(attempt, succeedingFrom: 2)
        }
        OpQueue().addOperation(retry)
        let waiting = await eventuallyAsync { retry.children.contains { $0 is DelayOp && $0.isExecuting } }
        try #require(waiting)
        #expect(retry.progress.fractionCompleted < 1)
        #expect(!retry.progress.isFinished)
        retry.cancel()
        await retry.waitUntilFinished()
        #expect(retry.progress.fractionCompleted == 1)
    }
}
