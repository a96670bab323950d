/// An operation that runs an `async` closure and keeps the value it returns, so that a caller can
/// await the result the way it awaits a `Task`.
///
/// ``OpQueue/addOperation(_:)->_`` returns one:
///
/// ```swift
/// let thumbnail = try await queue.addOperation { try await resize(image) }.value
/// ```
///
/// It is an ``AsyncOp``: it holds its queue slot until the closure returns, its task is cancelled
/// when the operation is, and it has dependencies, a priority and a completion block like any
/// operation.
public final class AsyncBlockOp<Success: Sendable>: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: `work` and `keptValue` are guarded by the operation's stripe lock.
    private var work: (@Sendable () async throws -> Success)?
    final var keptValue: Success?

    /// Creates an operation that runs `work` and keeps what it returns.
    public init(_ work: @escaping @Sendable () async throws -> Success) {
        self.work = work
        super.init()
    }

    /// Runs the closure once and keeps its value (the closure is released afterwards, with what
    /// it captured).
    public override func execute() async throws {
        guard let work = withState({ _ in self.work.take() }) else { return }
        let value = try await work()
        withState { _ in keptValue = value }
    }

    /// Starting it runs the library's own `execute()`, which only starts the task of the closure.
    override var startsBriefly: Bool { true }

    /// The value the closure returned, once the operation has finished.
    ///
    /// Awaiting it does not block a thread. Like `Task.value`, it keeps waiting if the awaiting
    /// task is cancelled, and does not cancel the operation; use
    /// ``value(cancellingOnTaskCancellation:)`` to pass the cancellation on.
    ///
    /// It is the operation's ``output``, unwrapped: the two never disagree (see
    /// ``ProducesOutput/output`` for the rule). A cancelled operation has no value, even if the
    /// closure returned one.
    ///
    /// - Throws: The error the closure threw. If the operation was cancelled (before or while the
    ///   closure ran), the error it was cancelled with (an ``OpTimeoutError``, a
    ///   ``DependencyCycleError``, the error of ``Op/cancel(with:)``), or `CancellationError`.
    public var value: Success {
        get async throws {
            await waitUntilFinished()
            return try outcome()
        }
    }

    /// The value the closure returned, passing on the cancellation of the awaiting task to the
    /// operation when `cancellingOnTaskCancellation` is `true`.
    public func value(cancellingOnTaskCancellation: Bool) async throws -> Success {
        await waitUntilFinished(cancellingOnTaskCancellation: cancellingOnTaskCancellation)
        return try outcome()
    }

    /// The outcome of the finished operation: its ``output``.
    private func outcome() throws -> Success {
        guard let output else {
            preconditionFailure("Internal inconsistency: \(self) has no output once it finished")
        }
        return try output.get()
    }
}
