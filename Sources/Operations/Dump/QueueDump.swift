/// A picture of one queue and of what holds each of its members, for ``OpQueue/dump()`` and for
/// the messages that report a stalled queue or a wait that could never return.
///
/// It holds only text and numbers: ``take(of:only:limit:)`` gathers it under the library's locks
/// and names the operations (their `description`, which a subclass may override) only after
/// releasing them; ``text`` renders it (see ``OpQueue/dump()`` for the format). Rendering is a
/// pure function of these fields, so the format is tested without threads.
struct QueueDump: Sendable, Equatable {
    /// The queue's description (`OpQueue "downloads"`), or `children of GroupOp "g"` for the
    /// queue that runs a group's children.
    var queue: String
    /// The queue's ``OpQueue/maxConcurrentOperationCount`` (negative: the default).
    var maxConcurrentOperationCount: Int
    /// Whether the queue is suspended.
    var isSuspended: Bool
    /// How many operations the queue holds (shown or not).
    var operationCount: Int
    /// How many slots of the queue's width are taken by running operations.
    var runningCount: Int
    /// One line per member shown, in the order the members were added.
    var lines: [Line]
    /// How many members are not shown (left out by a filter or a limit).
    var omitted: Int
}
