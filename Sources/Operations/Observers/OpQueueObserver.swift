/// Something told about the operations of a queue: as each is added, and as each finishes
/// (ProcedureKit's queue delegate).
///
/// Add one with ``OpQueue/addObserver(_:)``. Every method has an empty default.
///
/// ```swift
/// struct Audit: OpQueueObserver {
///     func willAdd(_ queue: OpQueue, operation: Op) {
///         operation.addCondition(.noFailedDependencies)     // every operation of this queue
///     }
///     func didFinish(_ queue: OpQueue, operation: Op, error: (any Error)?) {
///         if let error { log("\(operation) failed in \(queue): \(error)") }
///     }
/// }
/// jobs.addObserver(Audit())
/// ```
///
/// **When.** ``willAdd(_:operation:)`` runs on the thread that adds the operation, before it is
/// in the queue, and the add waits for it: it may add dependencies, conditions and observers to
/// the operation. ``didAdd(_:operation:)`` follows once the operation is in (it may have started
/// already). ``willFinish(_:operation:error:)`` and ``didFinish(_:operation:error:)`` are the
/// operation's own ``OpObserver/willFinish(_:error:)`` and ``OpObserver/didFinish(_:error:)``,
/// delivered by the rules of operation observers (one at a time, in order, never under a lock),
/// after the operation's observers that were added before it joined the queue and before those
/// added later. An operation turned away by a closed queue is not announced. The queue's
/// ``OpQueue/events(bufferingPolicy:)`` stream reports the same moments later, to the task that
/// iterates it: the callbacks come first.
public protocol OpQueueObserver: Sendable {
    /// `operation` is about to be added to `queue`: it is not in the queue yet.
    func willAdd(_ queue: OpQueue, operation: Op)
    /// `operation` was added to `queue`.
    func didAdd(_ queue: OpQueue, operation: Op)
    /// `operation`'s work is over and it is about to read as finished
    /// (``OpObserver/willFinish(_:error:)``).
    func willFinish(_ queue: OpQueue, operation: Op, error: (any Error)?)
    /// `operation` finished, with its ``Op/error`` (``OpObserver/didFinish(_:error:)``).
    func didFinish(_ queue: OpQueue, operation: Op, error: (any Error)?)
}

extension OpQueueObserver {
    /// Does nothing.
    public func willAdd(_ queue: OpQueue, operation: Op) {}
    /// Does nothing.
    public func didAdd(_ queue: OpQueue, operation: Op) {}
    /// Does nothing.
    public func willFinish(_ queue: OpQueue, operation: Op, error: (any Error)?) {}
    /// Does nothing.
    public func didFinish(_ queue: OpQueue, operation: Op, error: (any Error)?) {}
}
