/// Something told about the life of an operation: when it is attached, starts, is cancelled,
/// finishes, and produces other operations.
///
/// Add one with ``Op/addObserver(_:)``. Every method has an empty default, so implement only the
/// ones you need, or use ``BlockObserver`` with closures.
///
/// For one operation, the callbacks come one at a time, in the order of the events, and never
/// while a lock of the library is held (they may call anything on the operation or its queue).
/// ``willExecute(_:)`` returns before the body starts, and ``willFinish(_:error:)`` before the
/// operation reads as finished (for an operation that ran; one cancelled before it started reads
/// as finished already, and gets ``didCancel(_:error:)``, ``willFinish(_:error:)`` and
/// ``didFinish(_:error:)`` in that order). ``didCancel(_:error:)`` always comes before the
/// finish that the cancellation causes.
///
/// - Important: A callback must not block waiting for its own operation to finish (use
///   ``didFinish(_:error:)`` instead): while it runs, the operation's next callback cannot be
///   delivered, and the operation may need that callback to move on.
///
/// ```swift
/// struct FailureLog: OpObserver {
///     func didCancel(_ operation: Op, error: (any Error)?) {
///         print("\(operation) was cancelled", error.map { "because \($0)" } ?? "")
///     }
///     func didFinish(_ operation: Op, error: (any Error)?) {
///         if let error { print("\(operation) failed: \(error)") }
///     }
/// }
/// upload.addObserver(FailureLog())
/// ```
public protocol OpObserver: Sendable {
    /// The observer was added to `operation` (the first callback it gets from it).
    func didAttach(to operation: Op)
    /// The operation is about to run its body.
    func willExecute(_ operation: Op)
    /// The operation was cancelled, with the error it was cancelled with (``Op/cancel(with:)``,
    /// a failed condition), if any.
    func didCancel(_ operation: Op, error: (any Error)?)
    /// The operation's work is over and it is about to read as finished. For an operation
    /// cancelled before it started, this comes right before ``didFinish(_:error:)``.
    func willFinish(_ operation: Op, error: (any Error)?)
    /// The operation finished, with its ``Op/error``.
    func didFinish(_ operation: Op, error: (any Error)?)
    /// The operation produced `produced` (``Op/produce(_:)``), which is now in its queue.
    func didProduce(_ operation: Op, operation produced: Op)
}

extension OpObserver {
    /// Does nothing.
    public func didAttach(to operation: Op) {}
    /// Does nothing.
    public func willExecute(_ operation: Op) {}
    /// Does nothing.
    public func didCancel(_ operation: Op, error: (any Error)?) {}
    /// Does nothing.
    public func willFinish(_ operation: Op, error: (any Error)?) {}
    /// Does nothing.
    public func didFinish(_ operation: Op, error: (any Error)?) {}
    /// Does nothing.
    public func didProduce(_ operation: Op, operation produced: Op) {}
}
