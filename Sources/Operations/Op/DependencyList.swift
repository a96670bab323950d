/// The dependencies an operation holds, strongly, in the order they were added.
///
/// Most operations have one dependency, stored inline (``SmallList``). From ``indexThreshold``
/// dependencies on, the list is long: it keeps its dependencies in slots and the slot of each by
/// address (a ``SlotIndex``), so that asking whether an operation is a dependency, and removing
/// one, cost O(1) however many there are (removing N dependencies one by one was quadratic). A
/// removed dependency leaves an empty slot, released at once; the slots are compacted once most
/// are empty, and a list that shrinks below the threshold becomes short again.
///
/// Each dependency is *counted* or not: counted while the operation waits for its finish (the
/// dependency lists the operation as a dependent, and will tell it when it finishes), not once
/// it told, nor if it had finished when it was added. Knowing it per dependency is what lets
/// `removeDependency(_:)` race with the dependency's finish (see
/// ``OpStateMachine/removeDependency(_:wasCounted:)``).
struct DependencyList: Sequence {
    // In this order, and the long representation behind one reference: the list takes 28 bytes
    // and leaves its last four to the `Links` field after it, so that a `Links` object fits a
    // 96-byte heap block (see `PendingOperationSizeTests`).
    private var short = SmallList<Op>()
    private var long: Long?
    /// Which of the short list's dependencies are counted: bit i for the i-th.
    private var shortCounted: UInt32 = 0

    /// The representation of a long list: a class, so that a short list pays 8 bytes for it and
    /// not 24, copied before a change while another list shares it (``makeLongUnique()``).
    private final class Long {
        // Only touched with the lock of the operation whose list this is held: no dynamic
        // exclusivity checks in normal builds, as for `Links` (the checked build keeps them).
        #if OPERATIONS_INTERNAL_CHECKS
        /// The dependencies in the order they were added; `nil` where a removed one was.
        var slots: [Op?]
        /// The slot of each dependency, by address (``DependencyList/key(_:)``).
        var positions: SlotIndex
        /// Whether the dependency in each slot is counted.
        var counted: [Bool]
        #else
        @exclusivity(unchecked) var slots: [Op?]
        @exclusivity(unchecked) var positions: SlotIndex
        @exclusivity(unchecked) var counted: [Bool]
        #endif

        init(_ operations: some Sequence<(Op, counted: Bool)>) {
            let listed = Array(operations)
            slots = listed.map(\.0)
            counted = listed.map(\.counted)
            positions = SlotIndex(uniqueKeysWithValues: listed.enumerated().map { (DependencyList.key($0.element.0), $0.offset) })
        }

        private init(slots: [Op?], positions: SlotIndex, counted: [Bool]) {
            (self.slots, self.positions, self.counted) = (slots, positions, counted)
        }

        func copy() -> Long { Long(slots: slots, positions: positions, counted: counted) }
    }

    /// Gives this list a long representation of its own before it changes one it shares with a
    /// copy of the list (value semantics, as when `Long` was a struct).
    private mutating func makeLongUnique() {
        if long != nil, !isKnownUniquelyReferenced(&long) { long = long!.copy() }
    }

    /// From this many dependencies on, the list is long (see the type's discussion).
    static var indexThreshold: Int { NarrowedCounters.dependencySetThreshold }

    init() {}

    /// The key of `operation` in a long list's index: its address (never 0).
    @inline(__always)
    static func key(_ operation: Op) -> UInt64 {
        UInt64(UInt(bitPattern: ObjectIdentifier(operation)))
    }

    var count: Int { long?.positions.count ?? short.count }

    var isEmpty: Bool { count == 0 }

    /// Whether `operation` is listed (by identity).
    @inline(__always)
    func contains(_ operation: Op) -> Bool {
        if let long { return long.positions[Self.key(operation)] != nil }
        return short.contains { $0 === operation }
    }

    /// Adds `operation` at the end, counted or not; the caller checked that it is not listed yet.
    mutating func append(_ operation: Op, counted: Bool) {
        if long != nil {
            makeLongUnique()
            long!.positions.updateValue(long!.slots.count, forKey: Self.key(operation))
            long!.slots.append(operation)
            long!.counted.append(counted)
            return
        }
        if counted { shortCounted |= 1 << UInt32(short.count) }
        short.append(operation)
        if short.count >= Self.indexThreshold {
            long = Long(shortEntries)
            short = SmallList()
            shortCounted = 0
        }
    }

    /// Removes `operation`; returns it (for the caller to release after unlocking) and whether it
    /// was counted, or `nil` if it was not listed.
    mutating func remove(_ operation: Op) -> (operation: Op, wasCounted: Bool)? {
        guard long != nil else {
            guard let index = short.firstIndex(where: { $0 === operation }) else { return nil }
            let bit: UInt32 = 1 << UInt32(index)
            let wasCounted = shortCounted & bit != 0
            // The bits above the removed one move down by one.
            shortCounted = (shortCounted & (bit - 1)) | ((shortCounted >> 1) & ~(bit - 1))
            return (short.remove(at: index), wasCounted)
        }
        makeLongUnique()
        guard let position = long!.positions.removeValue(forKey: Self.key(operation)) else { return nil }
        let removed = long!.slots[position].take()!
        let wasCounted = long!.counted[position]
        long!.counted[position] = false
        if long!.slots.count > 2 * long!.positions.count + Self.indexThreshold {
            compact()
        }
        return (removed, wasCounted)
    }

    /// `operation` told that it finished: it is counted no more. Returns whether it was listed
    /// and counted.
    mutating func uncount(_ operation: Op) -> Bool {
        guard long != nil else {
            guard let index = short.firstIndex(where: { $0 === operation }) else { return false }
            let bit: UInt32 = 1 << UInt32(index)
            defer { shortCounted &= ~bit }
            return shortCounted & bit != 0
        }
        makeLongUnique()
        guard let position = long!.positions[Self.key(operation)] else { return false }
        defer { long!.counted[position] = false }
        return long!.counted[position]
    }

    /// How many dependencies are counted. O(n): for checks and tests.
    var countedCount: Int {
        guard let long else { return shortCounted.nonzeroBitCount }
        return zip(long.slots, long.counted).filter { $0.0 != nil && $0.1 }.count
    }

    /// The first counted dependency, if any (for tests). O(n).
    var firstCounted: Op? {
        guard let long else {
            return shortCounted == 0 ? nil : short.array[shortCounted.trailingZeroBitCount]
        }
        return zip(long.slots, long.counted).first { $0.0 != nil && $0.1 }?.0
    }

    /// The short list's dependencies with their counted bits.
    private var shortEntries: [(Op, counted: Bool)] {
        short.array.enumerated().map { ($0.element, counted: shortCounted & (1 << UInt32($0.offset)) != 0) }
    }

    /// The dependencies, in order.
    var array: [Op] {
        guard let long else { return short.array }
        return long.slots.compactMap { $0 }
    }

    func makeIterator() -> Iterator {
        Iterator(list: self)
    }

    /// Iterates the inline list in place, or the filled slots of a long one.
    struct Iterator: IteratorProtocol {
        private var short: SmallList<Op>.Iterator
        private var slots: IndexingIterator<[Op?]>?

        fileprivate init(list: DependencyList) {
            short = list.short.makeIterator()
            slots = list.long?.slots.makeIterator()
        }

        mutating func next() -> Op? {
            guard slots != nil else { return short.next() }
            while let slot = slots!.next() {
                if let operation = slot { return operation }
            }
            return nil
        }
    }

    /// Empties the list, returning the dependencies as a ``SmallList`` (to be released
    /// iteratively, see ``ReleaseTrampoline``).
    mutating func takeAll() -> SmallList<Op> {
        defer { self = DependencyList() }   // nothing is counted any more
        guard let long else { return short }
        var taken = SmallList<Op>()
        for case let operation? in long.slots { taken.append(operation) }
        return taken
    }

    /// Drops the empty slots, and becomes short again below the threshold.
    private mutating func compact() {
        let kept = zip(long!.slots, long!.counted).compactMap { slot, counted in slot.map { ($0, counted: counted) } }
        if kept.count < Self.indexThreshold {
            long = nil
            short = SmallList()
            shortCounted = 0
            for (operation, counted) in kept { append(operation, counted: counted) }
        } else {
            long = Long(kept)
        }
    }

    #if OPERATIONS_INTERNAL_CHECKS
    /// Traps unless each listed dependency has exactly one slot, and the representation matches
    /// the count.
    func checkInvariants() {
        guard let long else {
            precondition(shortCounted >> UInt32(short.count) == 0,
                         "Internal inconsistency: counted bits beyond the \(short.count) dependencies of a short list")
            return
        }
        precondition(long.counted.count == long.slots.count,
                     "Internal inconsistency: \(long.counted.count) counted flags for \(long.slots.count) slots")
        precondition(long.positions.count == long.slots.lazy.filter { $0 != nil }.count,
                     "Internal inconsistency: a long dependency list with \(long.positions.count) positions for its filled slots")
        for (address, position) in long.positions {
            precondition(long.slots[position].map(Self.key) == address,
                         "Internal inconsistency: a dependency's position names another slot")
        }
    }
    #endif
}
