/// A ``RetryOp`` whose attempts produce a value: it produces the value of the attempt that
/// succeeded, typed.
///
/// Make it as you make a `RetryOp`, with attempts that produce output (``AsyncBlockOp``,
/// ``ResultOp``, ``InvocationOp``, another `TypedRetryOp`): `Output` is what they produce.
///
/// ```swift
/// let fetch = TypedRetryOp(
///     maxAttempts: 4,
///     backoff: .exponential(initial: .milliseconds(250), multiplier: 2, maximum: .seconds(4), jitter: true),
///     shouldRetry: { error, _ in error is TransientError }
/// ) { attempt in
///     let download = AsyncBlockOp { try await client.download(url) }
///     download.timeout = .seconds(10)
///     return download
/// }
/// queue.addOperation(fetch)
/// let data = try await fetch.value      // Data: the attempts' output
/// ```
///
/// It is a `RetryOp` (the attempts, the backoff, ``RetryOp/attempts`` and
/// ``RetryOp/succeededAttempt`` work the same) and a ``ProducesOutput`` operation, so everything
/// that takes a typed producer takes it:
///
/// - `try await fetch.value` waits without blocking a thread and returns the succeeded attempt's
///   value, or throws the last attempt's error when every attempt failed, or the cancellation
///   (see ``ProducesOutput/value``); ``ProducesOutput/value(cancellingOnTaskCancellation:)``
///   cancels the retrying when the awaiting task is cancelled.
/// - ``output`` reads the same outcome once it has finished.
/// - `fetch.map { data in … }` (``ProducesOutput/map(_:)->ResultOp<Transformed>``) and
///   `consumer.inject(from: fetch) { … }` (``Op/inject(from:_:)``) pass the value on.
///
/// Every attempt has the type `makeAttempt` returns. To mix kinds of work across attempts (a cache
/// first, the network next), return an ``AsyncBlockOp`` that does either.
public final class TypedRetryOp<Output: Sendable>: RetryOp, ProducesOutput, @unchecked Sendable {
    // @unchecked Sendable: it adds one stored property to `RetryOp` (which is safe to share, see
    // there): `attemptOutput`, immutable and `@Sendable`.

    /// Reads the output of an attempt (one that `makeAttempt` made).
    private let attemptOutput: @Sendable (Op) -> Result<Output, any Error>?

    /// Creates an operation that makes and runs up to `maxAttempts` attempts, and produces the
    /// value of the one that succeeds.
    ///
    /// - Parameters:
    ///   - maxAttempts: The most attempts made (at least 1).
    ///   - backoff: How long to wait between attempts (``Backoff/none`` by default).
    ///   - shouldRetry: Asked after attempt `attempt` (numbered from 1) failed with `error`,
    ///     whether to make another; by default, always.
    ///   - makeAttempt: Makes the operation of attempt `attempt` (numbered from 1): a new
    ///     operation each time (see ``RetryOp``), which produces an `Output`.
    public init<Attempt: ProducesOutput>(
        maxAttempts: Int,
        backoff: Backoff = .none,
        shouldRetry: @escaping @Sendable (_ error: any Error, _ attempt: Int) -> Bool = { _, _ in true },
        makeAttempt: @escaping @Sendable (_ attempt: Int) -> Attempt
    ) where Attempt.Output == Output {
        attemptOutput = { attempt in
            guard let attempt = attempt as? Attempt else {
                preconditionFailure("Internal inconsistency: \(attempt) is not an attempt made by makeAttempt")
            }
            return attempt.output
        }
        super.init(maxAttempts: maxAttempts, backoff: backoff, shouldRetry: shouldRetry, makeAttempt: makeAttempt)
    }

    /// Creates an operation that waits for `input`'s value, passes it to every attempt, and
    /// produces the value of the attempt that succeeds (see
    /// ``RetryOp/init(maxAttempts:backoff:shouldRetry:input:makeAttempt:)``).
    public convenience init<Input: ProducesOutput, Attempt: ProducesOutput>(
        maxAttempts: Int,
        backoff: Backoff = .none,
        shouldRetry: @escaping @Sendable (_ error: any Error, _ attempt: Int) -> Bool = { _, _ in true },
        input: Input,
        makeAttempt: @escaping @Sendable (_ attempt: Int, _ input: Input.Output) -> Attempt
    ) where Attempt.Output == Output {
        let received = InputBox<Input.Output>()
        self.init(maxAttempts: maxAttempts, backoff: backoff, shouldRetry: shouldRetry) { attempt in
            makeAttempt(attempt, received.value(for: "TypedRetryOp"))
        }
        inject(from: input) { _, value in received.store(value) }
    }

    /// The value of the attempt that succeeded, or the error; `nil` until the operation finishes.
    ///
    /// When no attempt succeeded, the failure is the `TypedRetryOp`'s ``Op/error``: the last
    /// attempt's error. A cancelled `TypedRetryOp` has no value, even if an attempt succeeded
    /// before the cancellation came: its output is the error it was cancelled with, or
    /// `CancellationError()` (see ``ProducesOutput/output``). ``ProducesOutput/value`` awaits the
    /// same outcome.
    public var output: Result<Output, any Error>? {
        guard isFinished else { return nil }
        if let failure = finishedFailure {
            return .failure(failure)
        }
        // Read once the retrying is over: the succeeded attempt was recorded before it finished.
        guard let succeeded = succeededAttempt, let output = attemptOutput(succeeded) else {
            preconditionFailure("Internal inconsistency: \(self) finished with no error and no finished succeeded attempt")
        }
        return output
    }
}
