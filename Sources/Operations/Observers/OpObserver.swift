/// Something told about the life of an operation: when it is attached, starts, is cancelled,
/// finishes, and produces other operations.
///
/// Add one with ``Op/addObserver(_:)``. Every method has an empty default, so implement only the
/// ones you need, or use ``BlockObserver`` with closures.
///
/// For one operation, the callbacks come one at a time, in the order of the events, and never
/// while a lock of the library is held. ``willExecute(_:)`` returns before the body starts, and
/// ``willFinish(_:error:)`` before the operation reads as finished (for an operation that ran;
/// one cancelled before it started reads as finished already, and gets ``didCancel(_:error:)``,
/// ``willFinish(_:error:)`` and ``didFinish(_:error:)`` in that order). ``didCancel(_:error:)``
/// always comes before the finish that the cancellation causes. An observer hears of the events
/// after it was added, beginning with ``didAttach(to:)``.
///
/// Observers share one ordered outbox with the operation's property observations
/// (``Op/observe(_:options:changeHandler:)``), under one set of rules: the
/// "Delivery rules" section of <doc:ObservingOperations#Delivery-rules>. In short, a callback may
/// do anything: read the operation, cancel it, finish an ``AsyncOp`` (``AsyncOp/finish()`` from
/// ``didCancel(_:error:)`` delivers ``willFinish(_:error:)`` at once, nested in that callback),
/// add dependencies, add observers and observations, and wait. A callback that waits with the
/// library's waits steps aside while it waits, so a ``didCancel(_:error:)`` callback can wait
/// for its operation to finish.
///
/// - Important: ``willExecute(_:)`` and ``willFinish(_:error:)`` hold their operation up: waiting
///   there for the operation (or for something that needs it) could never return, and traps with
///   an explanation. Blocking a callback any other way (a semaphore, a lock) holds up the
///   operation's later callbacks.
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
    /// The operation's body returned: ``Op/main()`` for a synchronous operation; the `async` body
    /// of an ``AsyncOp`` or ``AsyncBlockOp`` (right before ``willFinish(_:error:)``); the
    /// synchronous ``AsyncOp/execute()-3w8hx`` of an ``AsyncOp`` that overrides it, whose work may
    /// go on until it calls ``AsyncOp/finish()``. It always comes after ``willExecute(_:)`` and
    /// before ``willFinish(_:error:)`` (an ``AsyncOp`` that finishes inside its `execute()` gets it
    /// right before ``willFinish(_:error:)``), and never for an operation whose body did not run.
    func didExecute(_ operation: Op)
    /// The operation was cancelled, with the error it was cancelled with (``Op/cancel(with:)``,
    /// a failed condition), if any.
    ///
    /// A cancellation made while the operation finishes, once ``willFinish(_:error:)`` was called,
    /// comes between ``willFinish(_:error:)`` and ``didFinish(_:error:)``: it no longer changes
    /// the outcome.
    func didCancel(_ operation: Op, error: (any Error)?)
    /// The operation's work is over and it is about to read as finished. For an operation
    /// cancelled before it started, this comes right before ``didFinish(_:error:)``.
    func willFinish(_ operation: Op, error: (any Error)?)
    /// The operation finished, with its ``Op/error``.
    func didFinish(_ operation: Op, error: (any Error)?)
    /// The operation produced `produced` (``Op/produce(_:)``), which is now in its queue.
    func didProduce(_ operation: Op, operation produced: Op)
    /// The operation is about to add `added`: one it produces (``Op/produce(_:)``), or, for a
    /// ``GroupOp``, a child (``GroupOp/addChild(_:)``, ``GroupOp/addChildren(_:)``). `added` is in
    /// no queue yet: the callback may add dependencies, conditions or observers to it. The
    /// operation that adds waits until the callback returns (ProcedureKit's `will(add:)`).
    func willAdd(_ operation: Op, operation added: Op)
    /// The operation added `added` (see ``willAdd(_:operation:)``), which is now in its queue or
    /// its group. For a produced operation it comes before ``didProduce(_:operation:)``.
    func didAdd(_ operation: Op, operation added: Op)
}

extension OpObserver {
    /// Does nothing.
    public func didAttach(to operation: Op) {}
    /// Does nothing.
    public func willExecute(_ operation: Op) {}
    /// Does nothing.
    public func didExecute(_ operation: Op) {}
    /// Does nothing.
    public func didCancel(_ operation: Op, error: (any Error)?) {}
    /// Does nothing.
    public func willFinish(_ operation: Op, error: (any Error)?) {}
    /// Does nothing.
    public func didFinish(_ operation: Op, error: (any Error)?) {}
    /// Does nothing.
    public func didProduce(_ operation: Op, operation produced: Op) {}
    /// Does nothing.
    public func willAdd(_ operation: Op, operation added: Op) {}
    /// Does nothing.
    public func didAdd(_ operation: Op, operation added: Op) {}
}
