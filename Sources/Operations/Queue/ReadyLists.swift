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

    // One stored list per level, not an array of them: reaching a list is a field access, with
    // no bounds check and no uniqueness check of an array buffer on every push and pop.
    private var veryHigh = RingBuffer<Entry>()
    private var high = RingBuffer<Entry>()
    private var normal = RingBuffer<Entry>()
    private var low = RingBuffer<Entry>()
    private var veryLow = RingBuffer<Entry>()
    private(set) var count = 0

    /// How many levels there are, one list each.
    private static var levels: Int { 5 }

    init() {}

    var isEmpty: Bool { count == 0 }

    /// Runs `body` on the list of level `index` (0 for `veryHigh` through 4 for `veryLow`).
    @inline(__always)
    private mutating func withList<Result>(_ index: Int, _ body: (inout RingBuffer<Entry>) -> Result) -> Result {
        switch index {
        case 0: body(&veryHigh)
        case 1: body(&high)
        case 2: body(&normal)
        case 3: body(&low)
        default: body(&veryLow)
        }
    }

    /// Appends `entry` to the list of `priority`.
    mutating func push(_ entry: Entry, priority: Op.QueuePriority) {
        withList(priority.readyListIndex) { $0.append(entry) }
        count += 1
    }

    /// Keeps only the entries for which `isKept` is true, in order; appends the others to
    /// `dropped`, for the caller to release after unlocking. O(count).
    mutating func compact(into dropped: inout [Entry], keeping isKept: (Entry) -> Bool) {
        let before = dropped.count
        for index in 0..<Self.levels {
            withList(index) { list in
                guard !list.isEmpty else { return }
                var kept = RingBuffer<Entry>()
                for entry in list.removeAll() {
                    if isKept(entry) { kept.append(entry) } else { dropped.append(entry) }
                }
                list = kept
            }
        }
        count -= dropped.count - before
    }

    /// The number of entries the lists have room for without growing.
    var capacity: Int {
        veryHigh.capacity + high.capacity + normal.capacity + low.capacity + veryLow.capacity
    }

    /// Removes and returns the oldest entry of the highest non-empty level.
    mutating func pop() -> Entry? {
        guard count > 0 else { return nil }
        count -= 1
        // Highest level first.
        if !veryHigh.isEmpty { return veryHigh.popFirst() }
        if !high.isEmpty { return high.popFirst() }
        if !normal.isEmpty { return normal.popFirst() }
        if !low.isEmpty { return low.popFirst() }
        if !veryLow.isEmpty { return veryLow.popFirst() }
        preconditionFailure("Internal inconsistency: ready count \(count + 1) with empty lists")
    }
}
