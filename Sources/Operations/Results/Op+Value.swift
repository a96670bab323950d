// Awaiting the value of any operation, typed by the caller.

extension Op {
    /// Suspends until the operation has finished, then returns its value as a `Value`.
    ///
    /// Use it where the operation's type does not say what it produces: an ``Op`` in a list, or a
    /// ``RetryOp`` made with ``RetryOp/init(maxAttempts:backoff:shouldRetry:makeAttempt:)``.
    /// Where the type says it, await the typed ``ProducesOutput/value`` instead (``ResultOp``,
    /// ``AsyncBlockOp``, ``InvocationOp``, ``TypedRetryOp``).
    ///
    /// ```swift
    /// let upload = RetryOp(maxAttempts: 3) { _ in AsyncBlockOp { try await client.upload(file) } }
    /// queue.addOperation(upload)
    /// let receipt = try await upload.value(as: Receipt.self)
    /// ```
    ///
    /// What the operation produces:
    /// - An operation that conforms to ``ProducesOutput``: its `Output`, and its value is its
    ///   ``ProducesOutput/output``.
    /// - A ``RetryOp``: what its attempts produce (as the latest attempt says), and its value is
    ///   that of its succeeded attempt.
    /// - Any other operation (a ``BlockOp``, an ``AsyncOp``, a ``GroupOp``): no output. Its value
    ///   is `()`: `try await op.value(as: Void.self)` waits for it and throws if it failed.
    ///
    /// The type must be the one the operation produces, exactly (not a supertype or an optional
    /// of it). The type is checked first: asking for another type throws an
    /// ``OutputTypeMismatchError`` even if the operation failed, so that the mistake shows on every
    /// run. A ``RetryOp`` that made no attempt (it was cancelled before it started) tells no type,
    /// and throws its failure.
    ///
    /// Awaiting it does not block a thread, and it returns or throws only once the operation has
    /// finished (and its completion block has returned). Like ``ProducesOutput/value`` and
    /// `Task.value`, it keeps waiting if the awaiting task is cancelled, and does not cancel the
    /// operation; use ``value(as:cancellingOnTaskCancellation:)`` to pass the cancellation on.
    ///
    /// - Parameter type: The type of the value, which the operation must produce.
    /// - Returns: The value of the operation.
    /// - Throws: An ``OutputTypeMismatchError`` if the operation does not produce `type`. Otherwise,
    ///   if the operation failed, its error; if it was cancelled, the error it was cancelled with
    ///   (an ``OpTimeoutError``, the error of ``cancel(with:)``), or `CancellationError`. For a
    ///   ``RetryOp`` whose attempts all failed, the last attempt's error.
    ///
    /// - Important: Awaiting an operation from its own body, or from an operation it depends on,
    ///   could never return; it traps with an explanation instead (see ``waitUntilFinished()-3s203``).
    public final func value<Value: Sendable>(as type: Value.Type) async throws -> Value {
        await waitUntilFinished()
        return try finishedValue(as: type)
    }

    /// Suspends until the operation has finished, then returns its value as a `Value`; if
    /// `cancellingOnTaskCancellation` is `true` and the awaiting task is cancelled, the operation
    /// is cancelled too (see ``waitUntilFinished(cancellingOnTaskCancellation:)``).
    ///
    /// ```swift
    /// let size = try await download.value(as: Int.self, cancellingOnTaskCancellation: true)
    /// ```
    ///
    /// See ``value(as:)`` for what it returns and throws. The wait still ends only once the
    /// operation has finished, which a cancelled operation does promptly; it then throws the
    /// operation's failure (`CancellationError` if it was cancelled without an error).
    public final func value<Value: Sendable>(
        as type: Value.Type,
        cancellingOnTaskCancellation: Bool
    ) async throws -> Value {
        await waitUntilFinished(cancellingOnTaskCancellation: cancellingOnTaskCancellation)
        return try finishedValue(as: type)
    }

    /// The value of this finished operation as a `Value`, or the error ``value(as:)`` throws.
    final func finishedValue<Value>(as type: Value.Type) throws -> Value {
        switch lookUpValue(as: type) {
        case .value(let value):
            return value
        case .failure(let error):
            throw error
        case .mismatch(let produced):
            throw OutputTypeMismatchError(operation: self, expected: Value.self, actual: produced)
        }
    }

    /// What this finished operation produces, read as a `Value` (see ``value(as:)`` for the
    /// rules). Reads no lock while calling another: each operation's state is read on its own.
    final func lookUpValue<Value>(as type: Value.Type) -> OutputLookup<Value> {
        if let producer = self as? any ProducesOutput {
            return producer.lookUpOutputValue(as: type)
        }
        if let retry = self as? RetryOp {
            return retry.lookUpAttemptValue(as: type)
        }
        guard Value.self == Void.self else { return .mismatch(produced: nil) }
        if let failure = finishedFailure { return .failure(failure) }
        return .value(() as! Value)
    }
}
