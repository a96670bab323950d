/// The dependents an operation holds back, as it lists them (see ``DependentLink``), in the
/// order they were added.
///
/// Removing one is cheap however many there are: a dependent that is deinitialized before its
/// dependency finishes removes itself, so a large fan-out released or cancelled as a whole
/// removes them all. A short list is searched. From ``indexThreshold`` links on, the links move to
/// an array of slots, and a ``SlotIndex`` maps the serial number of each listed dependent to the
/// slot of its link: a removed link leaves an empty slot behind (never read again), and the slots
/// are compacted once most of them are empty.
///
/// Each listed dependent has exactly one link, at any length: a dependent removed and added again
/// is listed once, at the end (its dependency finishing tells it once).
struct DependentList {
    /// Every link, in order, while the list is short (``long`` is `nil`); empty once it is long.
    private var short = SmallList<DependentLink>()
    /// The links once the list is long.
    private var long: Long?

    /// The representation of a long list: a class, so that a short list pays 8 bytes for it and
    /// not 16 (a `Links` object fits a 96-byte heap block: see `PendingOperationSizeTests`),
    /// copied before a change while another list shares it (``makeLongUnique()``).
    private final class Long {
        // Only touched with the lock of the operation whose list this is held: no dynamic
        // exclusivity checks in normal builds, as for `Links` (the checked build keeps them).
        #if OPERATIONS_INTERNAL_CHECKS
        /// The links in the order they were added; `nil` where a removed one was.
        var slots: [DependentLink?]
        /// The slot of each listed dependent's link, by serial number.
        var positions: SlotIndex
        #else
        @exclusivity(unchecked) var slots: [DependentLink?]
        @exclusivity(unchecked) var positions: SlotIndex
        #endif

        init(_ links: some Sequence<DependentLink>) {
            let slots: [DependentLink?] = links.map { $0 }
            positions = SlotIndex(uniqueKeysWithValues: slots.indices.map { (slots[$0]!.serial, $0) })
            self.slots = slots
        }

        private init(slots: [DependentLink?], positions: SlotIndex) {
            (self.slots, self.positions) = (slots, positions)
        }

        func copy() -> Long { Long(slots: slots, positions: positions) }
    }

    /// Gives this list a long representation of its own before it changes one it shares with a
    /// copy of the list (value semantics, as when `Long` was a struct).
    private mutating func makeLongUnique() {
        if long != nil, !isKnownUniquelyReferenced(&long) { long = long!.copy() }
    }

    /// From this many links on, the list is long (see the type's discussion).
    static let indexThreshold = NarrowedCounters.dependentListIndexThreshold

    init() {}

    /// How many dependents are listed.
    var count: Int { long?.positions.count ?? short.count }

    var isEmpty: Bool { count == 0 }

    /// The serial numbers of the listed dependents, in order.
    var serials: [UInt64] {
        if let long { return long.slots.compactMap { $0?.serial } }
        return short.map(\.serial)
    }

    /// Whether `operation` is listed (compared by identity, without touching it).
    func contains(_ operation: Op) -> Bool {
        if let long {
            guard let slot = long.positions[operation.serial] else { return false }
            return long.slots[slot]!.links(operation)
        }
        return short.contains { $0.links(operation) }
    }

    /// Lists a dependent that is not listed.
    mutating func append(_ link: DependentLink) {
        if long != nil {
            makeLongUnique()
            let slot = long!.slots.count
            let previous = long!.positions.updateValue(slot, forKey: link.serial)
            precondition(previous == nil, "Internal inconsistency: dependent \(link.serial) listed twice")
            long!.slots.append(link)
        } else if short.count + 1 >= Self.indexThreshold {
            var links = short.array
            links.append(link)
            long = Long(links)   // traps if a serial number is there twice
            short = SmallList()
        } else {
            short.append(link)
        }
        #if OPERATIONS_INTERNAL_CHECKS
        _checkInvariants()
        #endif
    }

    /// Removes the dependent whose serial number is `serial`; returns whether it was listed.
    mutating func remove(serial: UInt64) -> Bool {
        defer {
            #if OPERATIONS_INTERNAL_CHECKS
            _checkInvariants()
            #endif
        }
        guard long != nil else {
            return short.removeFirst { $0.serial == serial } != nil
        }
        makeLongUnique()
        guard let slot = long!.positions.removeValue(forKey: serial) else { return false }
        long!.slots[slot] = nil
        if long!.slots.count > 2 * long!.positions.count + Self.indexThreshold {
            compact()
        }
        return true
    }

    /// Empties the list, calling `body` with each listed dependent, retained (`nil` if its
    /// deinitialization has begun), and its serial number, in order. Call with the lock of the
    /// operation whose list this is held (see ``DependentLink/retainIfAlive()``): a removed
    /// link is never touched, its dependent may be gone.
    mutating func removeAll(_ body: (Op?, UInt64) -> Void) {
        var taken = DependentList()
        swap(&taken, &self)   // moved out: a copy would retain each of its references
        if let long = taken.long {
            for case let link? in long.slots {
                body(link.retainIfAlive(), link.serial)
            }
        } else {
            taken.short.forEach { link in body(link.retainIfAlive(), link.serial) }
        }
    }

    /// The listed dependents, retained, in order, leaving out those whose deinitialization has
    /// begun (for the cycle search on a new edge). Call with the lock of the operation whose list
    /// this is held, and release the result after unlocking (see ``removeAll(_:)``).
    func retainedDependents() -> [Op] {
        var dependents: [Op] = []
        dependents.reserveCapacity(count)
        if let long {
            for case let link? in long.slots {
                if let dependent = link.retainIfAlive() { dependents.append(dependent) }
            }
        } else {
            for link in short {
                if let dependent = link.retainIfAlive() { dependents.append(dependent) }
            }
        }
        return dependents
    }

    /// Drops the empty slots; a list that became short goes back to the short form.
    private mutating func compact() {
        let links = long!.slots.lazy.compactMap { $0 }
        if long!.positions.count < Self.indexThreshold {
            var short = SmallList<DependentLink>()
            for link in links { short.append(link) }
            self.short = short
            long = nil
        } else {
            long = Long(links)
        }
    }

    #if OPERATIONS_INTERNAL_CHECKS
    /// Checks that each listed dependent has exactly one link, and a long list's index.
    func _checkInvariants() {
        if let long {
            precondition(short.isEmpty, "Internal inconsistency: a long dependent list with short links")
            var live = 0
            for (slot, link) in long.slots.enumerated() {
                guard let link else { continue }
                live += 1
                precondition(long.positions[link.serial] == slot,
                             "Internal inconsistency: dependent \(link.serial) in slot \(slot) is indexed at \(String(describing: long.positions[link.serial]))")
            }
            precondition(live == long.positions.count, "Internal inconsistency: \(live) live links, \(long.positions.count) indexed")
        } else {
            precondition(short.count < Self.indexThreshold, "Internal inconsistency: a short dependent list of \(short.count)")
            let serials = short.map(\.serial)
            precondition(Set(serials).count == serials.count, "Internal inconsistency: a dependent listed twice in \(serials)")
        }
    }
    #endif
}
