/// The ready operations of a queue: one first-in, first-out list per priority.
///
/// Pushing and popping are O(1); popping takes the oldest entry of the highest non-empty
/// priority. An entry may be stale (its operation's priority changed, so a newer entry exists);
/// the scheduler drops stale entries when it pops them and compacts the lists when they pile up,
/// so nothing is ever searched or removed from the middle on the hot path.
struct ReadyLists {
    /// One ready-list entry.
    struct Entry {
        /// The operation to start.
        let operation: Op
        /// The operation's ticket when the entry was made.
        let ticket: Op.Ticket
    }

    private var lists = [RingBuffer<Entry>](repeating: RingBuffer(), count: Op.QueuePriority.allCases.count)
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    mutating func push(_ entry: Entry, priority: Op.QueuePriority) {
        lists[priority.readyListIndex].append(entry)
        count += 1
    }

    /// Keeps only the entries for which `isKept` is true, in order; appends the others to
    /// `dropped`, for the caller to release after unlocking. O(count).
    mutating func compact(into dropped: inout [Entry], keeping isKept: (Entry) -> Bool) {
        let before = dropped.count
        for index in lists.indices where !lists[index].isEmpty {
            var kept = RingBuffer<Entry>()
            for entry in lists[index].removeAll() {
                if isKept(entry) { kept.append(entry) } else { dropped.append(entry) }
            }
            lists[index] = kept
        }
        count -= dropped.count - before
    }

    /// The number of entries the lists have room for without growing.
    var capacity: Int {
        lists.reduce(0) { $0 + $1.capacity }
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
