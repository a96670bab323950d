import Testing
@testable import Operations

/// The error an attempt fails with, told apart by the attempt's number.
private struct AttemptFailure: Error, Equatable {
    let attempt: Int
}

/// A `TypedRetryOp` produces the value of its succeeded attempt, typed: `value` awaits it without
/// blocking a thread, `output`, `map` and `inject(from:)` see the same outcome, and cancellation
/// wins. Every test waits with `await`.
@Suite struct TypedRetryValueTests {

    @Test func valueIsTheSucceededAttemptsValueAfterFailedAttempts() async throws {
        let retry = TypedRetryOp(maxAttempts: 5, backoff: .constant(.milliseconds(5))) { attempt in
            AsyncBlockOp {
                if attempt < 3 { throw AttemptFailure(attempt: attempt) }
                return attempt * 100
            }
        }
        OpQueue().addOperation(retry)
        let value: Int = try await retry.value

        #expect(value == 300)
        #expect(retry.attemptCount == 3)
        #expect(retry.succeededAttempt === retry.attempts.last)
        #expect(try retry.output?.get() == 300)
        #expect(try retry.output(as: Int.self)?.get() == 300)
    }

    @Test func valueThrowsTheLastAttemptsErrorWhenEveryAttemptFails() async {
        let retry = TypedRetryOp(maxAttempts: 3) { attempt in
            ResultOp<String> { throw AttemptFailure(attempt: attempt) }
        }
        OpQueue().addOperation(retry)

        await #expect(throws: AttemptFailure(attempt: 3)) { try await retry.value }
        #expect(retry.attemptCount == 3)
        #expect(retry.error as? AttemptFailure == AttemptFailure(attempt: 3))
        #expect(throws: AttemptFailure(attempt: 3)) { try retry.output?.get() }
    }

    @Test func aRetryCancelledBeforeItStartsThrowsCancellationError() async {
        let retry = TypedRetryOp(maxAttempts: 3) { _ in ResultOp { 1 } }
        retry.cancel()
        OpQueue().addOperation(retry)

        await #expect(throws: CancellationError.self) { try await retry.value }
        #expect(retry.attemptCount == 0)
    }

    @Test func cancellingTheAwaitingTaskCancelsTheRetryWhenAsked() async throws {
        let started = EventLog<Int>()
        let retry = TypedRetryOp(maxAttempts: 3) { attempt in
            AsyncBlockOp<Int> {
                started.append(attempt)
                try await Task.sleep(for: .seconds(60))
                return attempt
            }
        }
        OpQueue().addOperation(retry)
        let waiter = Task { try await retry.value(cancellingOnTaskCancellation: true) }
        try #require(await eventuallyAsync { started.count == 1 }, "attempt 1 never started")

        waiter.cancel()
        let result = await waiter.result

        #expect(throws: CancellationError.self) { try result.get() }
        #expect(retry.isCancelled)
        #expect(retry.isFinished)
        #expect(started.all == [1], "no attempt is made after the cancellation")
    }

    @Test func cancellingTheAwaitingTaskLeavesTheRetryRunningByDefault() async throws {
        let gate = Gate()
        let started = EventLog<Int>()
        let retry = TypedRetryOp(maxAttempts: 3) { attempt in
            AsyncBlockOp<Int> {
                started.append(attempt)
                await gate.waitOffThread()
                return 7
            }
        }
        OpQueue().addOperation(retry)
        let waiter = Task { try await retry.value }
        try #require(await eventuallyAsync { started.count == 1 }, "attempt 1 never started")

        waiter.cancel()
        gate.open()

        #expect(try await waiter.value == 7)
        #expect(!retry.isCancelled)
    }

    @Test func aRetryCancelledAfterItsAttemptSucceededHasNoValue() async throws {
        let retryToCancel = LockedBox<RetryOp?>(nil)
        let retry = TypedRetryOp(maxAttempts: 3) { _ in
            let attempt = ResultOp { 42 }
            // The attempt has succeeded; the retry has not finished yet.
            attempt.completionBlock = { retryToCancel.withLockedValue { $0 }?.cancel() }
            return attempt
        }
        retryToCancel.withLockedValue { $0 = retry }
        OpQueue().addOperation(retry)
        await retry.waitUntilFinished()

        try #require(retry.succeededAttempt != nil, "the attempt must have succeeded")
        #expect(retry.isCancelled)
        await #expect(throws: CancellationError.self) { try await retry.value }
        #expect(throws: CancellationError.self) { try retry.output?.get() }
        #expect(throws: CancellationError.self) { try retry.output(as: Int.self)?.get() }
        await #expect(throws: CancellationError.self) { try await retry.value(as: Int.self) }
    }

    @Test func mapAndInjectionPassTheValueOn() async throws {
        let retry = TypedRetryOp(maxAttempts: 2) { attempt in
            ResultOp<[UInt8]> {
                if attempt == 1 { throw AttemptFailure(attempt: attempt) }
                return Array("news".utf8)
            }
        }
        let count = retry.map { bytes in bytes.count }
        let received = EventLog<[UInt8]>()
        let consumer = BlockOp {}
        consumer.inject(from: retry) { _, bytes in received.append(bytes) }
        await OpQueue().addOperations([retry, count, consumer], waitUntilFinished: false)

        #expect(try await count.value == 4)
        await consumer.waitUntilFinished()
        #expect(received.all == [Array("news".utf8)])
        #expect(!consumer.isCancelled)
    }

    @Test func anAsyncAttemptProducesTheRetrysOutputType() async throws {
        // Compile-time: the attempts' output type is the retry's, with no annotation.
        let retry = TypedRetryOp(maxAttempts: 1) { _ in AsyncBlockOp { "done" } }
        let typed: TypedRetryOp<String> = retry
        let producer: any ProducesOutput<String> = typed
        OpQueue().addOperation(retry)
        #expect(try await retry.value == "done")
        #expect(try producer.output?.get() == "done")
    }
}
