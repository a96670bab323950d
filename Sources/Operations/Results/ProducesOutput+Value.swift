// Awaiting the typed value of an operation that produces output.

extension ProducesOutput {
    /// The operation's value, once it has finished: its ``output``, unwrapped.
    ///
    /// ```swift
    /// let fetch = TypedRetryOp(maxAttempts: 3) { _ in
    ///     AsyncBlockOp { try await client.download(url) }
    /// }
    /// queue.addOperation(fetch)
    /// let data = try await fetch.value    // typed: the attempts' output type
    /// ```
    ///
    /// Awaiting it does not block a thread. Like `Task.value` (and ``AsyncBlockOp/value``), it
    /// keeps waiting if the awaiting task is cancelled, and does not cancel the operation; use
    /// ``value(cancellingOnTaskCancellation:)`` to pass the cancellation on. It returns or throws
    /// only once the operation has finished (and its completion block has returned).
    ///
    /// It never disagrees with ``output``: a cancelled operation has no value, even if its body
    /// returned one (see ``output`` for the rule).
    ///
    /// - Throws: The operation's error if it failed. If it was cancelled, the error it was
    ///   cancelled with (an ``OpTimeoutError``, a ``DependencyCycleError``, the error of
    ///   ``Op/cancel(with:)``), or `CancellationError`. For a ``TypedRetryOp`` whose attempts all
    ///   failed, the last attempt's error.
    ///
    /// - Important: Awaiting an operation from its own body, or from an operation it depends on,
    ///   could never return; it traps with an explanation instead (see ``Op/waitUntilFinished()-3s203``).
    public var value: Output {
        get async throws {
            await waitUntilFinished()
            return try finishedOutputResult().get()
        }
    }

    /// The operation's value, passing on the cancellation of the awaiting task to the operation
    /// when `cancellingOnTaskCancellation` is `true` (see
    /// ``Op/waitUntilFinished(cancellingOnTaskCancellation:)``).
    ///
    /// ```swift
    /// let data = try await fetch.value(cancellingOnTaskCancellation: true)
    /// ```
    ///
    /// The wait still ends only once the operation has finished, which a cancelled operation does
    /// promptly; it then throws the operation's failure, as ``value`` does.
    public func value(cancellingOnTaskCancellation: Bool) async throws -> Output {
        await waitUntilFinished(cancellingOnTaskCancellation: cancellingOnTaskCancellation)
        return try finishedOutputResult().get()
    }

    /// The output of this finished operation read as a `Value` for ``Op/value(as:)``: a mismatch
    /// unless `Value` is `Output`, whatever the outcome.
    func lookUpOutputValue<Value>(as type: Value.Type) -> OutputLookup<Value> {
        guard Output.self == Value.self else { return .mismatch(produced: Output.self) }
        switch finishedOutputResult() {
        case .success(let value):
            return .value(value as! Value)   // the same type, checked above
        case .failure(let error):
            return .failure(error)
        }
    }

    /// The ``output`` of the finished operation.
    private func finishedOutputResult() -> Result<Output, any Error> {
        guard let output else {
            preconditionFailure("Internal inconsistency: \(self) has no output once it finished")
        }
        return output
    }
}
