import Dispatch
import Operations

/// An operation that holds a mutual-exclusivity category until it is let go, so that every
/// operation of the category added meanwhile asks for it and waits: the waiting is the same in
/// every run, however fast the queues drain.
public final class CategoryHolder: Sendable {
    private let release = DispatchSemaphore(value: 0)

    /// Adds the holder to `queue` and returns once it holds `category`.
    public init(_ category: OpCondition, on queue: OpQueue) {
        let holding = DispatchSemaphore(value: 0)
        let release = release
        let holder = BlockOp {
            holding.signal()
            release.wait()
        }
        holder.addCondition(category)
        queue.addOperation(holder)
        holding.wait()
    }

    /// The holder finishes, and gives the category back.
    public func letGo() {
        release.signal()
    }
}
