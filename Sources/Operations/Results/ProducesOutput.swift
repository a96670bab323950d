/// An operation that produces a typed value: its ``output`` is the value, or the error, once the
/// operation has finished.
///
/// ``ResultOp``, ``AsyncBlockOp``, ``InvocationOp`` and ``TypedRetryOp`` produce output. Pass it
/// to the next step with ``Op/inject(from:_:)``, or transform it with
/// ``map(_:)->ResultOp<Transformed>``:
///
/// ```swift
/// let fetch = AsyncBlockOp { try await client.download(url) }
/// let parse = fetch.map { data in try Feed(parsing: data) }
/// let show = BlockOp { }
/// show.inject(from: parse) { _, feed in render(feed) }
/// queue.addOperations([fetch, parse, show], waitUntilFinished: false)
/// ```
///
/// From `async` code, await the value without blocking a thread:
///
/// ```swift
/// let feed = try await parse.value
/// ```
///
/// Where an operation's type does not say what it produces (an ``Op``, a ``RetryOp``), await
/// ``Op/value(as:)``, which throws an ``OutputTypeMismatchError`` for a wrong type.
public protocol ProducesOutput<Output>: Op {
    /// The type of the value.
    associatedtype Output: Sendable

    /// `nil` until the operation finishes; then `.success` with the value, or `.failure` with
    /// the error.
    ///
    /// **Cancellation wins.** An operation that reads as cancelled when it finishes
    /// (``Op/isCancelled``) has no value: its output is `.failure` with its ``Op/error`` (the
    /// error it was cancelled with, such as an ``OpTimeoutError``, or the one its body threw
    /// first), or with `CancellationError()` if it has none. That holds even if its body
    /// returned a value despite the cancellation, and whether it was cancelled before it ran or
    /// while it ran. Unlike a `Task`, whose `value` keeps what the closure returned, an
    /// operation has one outcome, which ``Op/isCancelled``, ``output``, ``value``,
    /// ``Op/value(as:)``, ``map(_:)->ResultOp<Transformed>`` and ``Op/inject(from:_:)`` all agree on.
    var output: Result<Output, any Error>? { get }
}

extension Op {
    /// The ``ProducesOutput/output`` of a finished operation that kept `value` (`nil` if its body
    /// did not produce one), read with the operation's lock held: `nil` while it is not finished;
    /// the cancellation or the error if there is one; otherwise the value.
    final func finishedOutput<Value>(_ value: () -> Value?) -> Result<Value, any Error>? {
        let outcome: (Value?, (any Error)?, Bool, Bool) = withState { machine in
            (value(), machine.error, machine.isFinished, machine.isCancelled)
        }
        let (kept, error, finished, cancelled) = outcome
        guard finished else { return nil }
        if let failure = Op.failure(error: error, cancelled: cancelled) { return .failure(failure) }
        guard let kept else {
            misuse("\(self) finished without producing its output: a subclass overrides main() or execute() without calling super. Call super from the override.")
        }
        return .success(kept)
    }

    /// The failure of a finished operation by the rule of ``ProducesOutput/output``: the error it
    /// was cancelled with (`CancellationError()` if none) if it reads as cancelled, otherwise its
    /// error; `nil` if it succeeded.
    final var finishedFailure: (any Error)? {
        withState { machine in Op.failure(error: machine.error, cancelled: machine.isCancelled) }
    }

    /// The failure of an operation that finished with `error`, `cancelled` or not: cancellation
    /// wins (see ``ProducesOutput/output``).
    static func failure(error: (any Error)?, cancelled: Bool) -> (any Error)? {
        cancelled ? error ?? CancellationError() : error
    }

    /// Records `error` as the operation's ``error`` (the first error wins), as a failure of its
    /// work; for operations whose body reports failures (``ResultOp``).
    final func recordFailure(_ error: any Error) {
        transition { machine in
            let old = machine.error
            machine.recordError(error)
            machine.record(.error, old: old as Any, new: machine.error as Any)
        }
    }
}
