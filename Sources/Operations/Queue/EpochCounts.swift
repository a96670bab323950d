/// How many members (barriers not included) each epoch of a queue has, from the epoch of the
/// oldest barrier that has not left on (see ``OpQueueStateMachine``).
///
/// An array read from `start`: the epoch of a barrier that leaves is dropped by moving `start`,
/// and the dead prefix is cut (into an array of the live epochs' size) once it is the larger part
/// and longer than ``NarrowedCounters/epochCountsSlack``, so every operation is amortised O(1),
/// memory follows the pending barriers at any age, and the common case (no barrier) is one array
/// element.
struct EpochCounts {
    private var counts: [Int] = [0]
    private var start = 0

    init() {}

    /// The number of epochs from the oldest pending one on.
    var count: Int { counts.count - start }

    /// The count of the epoch `offset` epochs after the oldest pending one.
    subscript(offset: Int) -> Int {
        get { counts[start + offset] }
        set { counts[start + offset] = newValue }
    }

    /// Opens a new epoch (a barrier was added).
    mutating func append(_ count: Int) {
        counts.append(count)
    }

    /// Drops the oldest epoch (its barrier left).
    mutating func removeFirst() {
        start += 1
        if start >= NarrowedCounters.epochCountsSlack && start * 2 >= counts.count {
            counts = Array(counts[start...])
            start = 0
        }
    }

    /// The number of epochs the array has room for without growing.
    var capacity: Int { counts.capacity }

    /// The counts, oldest epoch first.
    var elements: ArraySlice<Int> { counts[start...] }
}
