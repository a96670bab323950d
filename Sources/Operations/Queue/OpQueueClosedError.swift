/// The error of an operation that a closed ``OpQueue`` turned away or a shutdown cancelled, and of
/// ``OpQueue/enqueue(_:)`` on a closed queue.
///
/// ```swift
/// queue.close()
/// let late = BlockOp { work() }
/// queue.addOperation(late)          // finishes at once, cancelled, without running
/// print(late.error as? OpQueueClosedError as Any)
/// // Optional(OpQueue "uploads" is closed: it takes no new operations)
/// ```
public struct OpQueueClosedError: Error, Equatable, CustomStringConvertible {
    /// The description of the queue (its name).
    public let queue: String

    /// Creates the error of the closed queue described by `queue`.
    public init(queue: String) {
        self.queue = queue
    }

    /// Names the queue, and says what it means.
    public var description: String {
        "\(queue) is closed: it takes no new operations"
    }
}
