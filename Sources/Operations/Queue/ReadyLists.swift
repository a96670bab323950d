/// The ready operations of a queue: one first-in, first-out list per priority.
///
/// Pushing and popping are O(1); popping takes the oldest entry of the highest non-empty
/// priority. An entry may be stale (its operation's priority changed, so a newer entry exists,
/// or it started some other way); the operation refuses a stale entry when the queue tries to
/// start it, so nothing is ever searched or removed from the middle.
struct ReadyLists {
    /// One ready-list entry.
    struct Entry {
        /// The operation to start.
        let operation: Op
        /// The operation's ticket when the entry was made.
        let ticket: UInt32
    }

    private var lists = [RingBuffer<Entry>](repeating: RingBuffer(), count: Op.QueuePriority.allCases.count)
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    mutating func push(_ entry: Entry, priority: Op.QueuePriority) {
        lists[priority.readyListIndex].append(entry)
        count += 1
    }

    mutating func pop() -> Entry? {
        guard count > 0 else { return nil }
        for index in lists.indices where !lists[index].isEmpty {
            count -= 1
            return lists[index].popFirst()
        }
        preconditionFailure("Internal inconsistency: ready count \(count) with empty lists")
    }
}
