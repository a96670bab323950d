/// The dependencies an operation holds, strongly, in the order they were added.
///
/// Most operations have one dependency, stored inline (``SmallList``). From ``indexThreshold``
/// dependencies on, the list is long: it keeps its dependencies in slots and the slot of each by
/// identity, so that asking whether an operation is a dependency, and removing one, cost O(1)
/// however many there are (removing N dependencies one by one was quadratic). A removed
/// dependency leaves an empty slot, released at once; the slots are compacted once most are
/// empty, and a list that shrinks below the threshold becomes short again.
struct DependencyList: Sequence {
    private var short = SmallList<Op>()
    private var long: Long?

    /// The representation of a long list.
    private struct Long {
        /// The dependencies in the order they were added; `nil` where a removed one was.
        var slots: [Op?]
        /// The slot of each dependency, by identity.
        var positions: [ObjectIdentifier: Int]

        init(_ operations: some Sequence<Op>) {
            let listed = Array(operations)
            slots = listed
            positions = Dictionary(uniqueKeysWithValues: listed.enumerated().map { (ObjectIdentifier($0.element), $0.offset) })
        }
    }

    /// From this many dependencies on, the list is long (see the type's discussion).
    static var indexThreshold: Int { NarrowedCounters.dependencySetThreshold }

    init() {}

    var count: Int { long?.positions.count ?? short.count }

    var isEmpty: Bool { count == 0 }

    /// Whether `operation` is listed (by identity).
    func contains(_ operation: Op) -> Bool {
        if let long { return long.positions[ObjectIdentifier(operation)] != nil }
        return short.contains { $0 === operation }
    }

    /// Adds `operation` at the end; the caller checked that it is not listed yet.
    mutating func append(_ operation: Op) {
        if long != nil {
            long!.positions[ObjectIdentifier(operation)] = long!.slots.count
            long!.slots.append(operation)
            return
        }
        short.append(operation)
        if short.count >= Self.indexThreshold {
            long = Long(short)
            short = SmallList()
        }
    }

    /// Removes `operation`; returns it (for the caller to release after unlocking), or `nil` if
    /// it was not listed.
    mutating func remove(_ operation: Op) -> Op? {
        guard long != nil else {
            return short.removeFirst { $0 === operation }
        }
        guard let position = long!.positions.removeValue(forKey: ObjectIdentifier(operation)) else { return nil }
        let removed = long!.slots[position].take()
        if long!.slots.count > 2 * long!.positions.count + Self.indexThreshold {
            compact()
        }
        return removed
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
        defer { self = DependencyList() }
        guard let long else { return short }
        var taken = SmallList<Op>()
        for case let operation? in long.slots { taken.append(operation) }
        return taken
    }

    /// Drops the empty slots, and becomes short again below the threshold.
    private mutating func compact() {
        let kept = long!.slots.compactMap { $0 }
        if kept.count < Self.indexThreshold {
            long = nil
            short = SmallList()
            for operation in kept { short.append(operation) }
        } else {
            long = Long(kept)
        }
    }

    #if OPERATIONS_INTERNAL_CHECKS
    /// Traps unless each listed dependency has exactly one slot, and the representation matches
    /// the count.
    func checkInvariants() {
        guard let long else { return }
        precondition(long.positions.count == long.slots.lazy.filter { $0 != nil }.count,
                     "Internal inconsistency: a long dependency list with \(long.positions.count) positions for its filled slots")
        for (identifier, position) in long.positions {
            precondition(long.slots[position].map(ObjectIdentifier.init) == identifier,
                         "Internal inconsistency: a dependency's position names another slot")
        }
    }
    #endif
}
