/// The slot of each entry of a long list, by a non-zero 64-bit key: an object's address
/// (``DependencyList``) or an operation's serial number (``DependentList``).
///
/// A dictionary hashes each key with SipHash, seeded per process: about 130 instructions a
/// look-up for one word, three look-ups and an insertion per operation of a fan-in, 650
/// instructions in all. Neither kind of key can be chosen by an attacker, so this table hashes
/// with one multiplication (Fibonacci hashing: the key times 2^64 divided by the golden ratio,
/// whose top bits spread the consecutive serial numbers, and the addresses that differ in their
/// middle bits, over the whole table).
///
/// Open addressing with linear probing in one array of key and value pairs, a power-of-two
/// capacity at most half full, and deletion by shifting back the entries that follow
/// (no tombstones: a table that sees insertions and removals forever never fills with them).
///
/// - Complexity: O(1) expected per look-up, insertion and removal; growing is amortised.
struct SlotIndex: Sequence {
    /// One position of the table: empty while `key` is 0.
    private struct Entry {
        var key: UInt64
        var value: Int
    }

    private var entries: [Entry]
    /// 64 minus the base-2 logarithm of the capacity: the top bits of the hash pick the position.
    private var shift: UInt64
    /// How many keys the table holds.
    private(set) var count = 0

    /// The smallest capacity (tiny in the checked build, so that the tests grow the table, wrap
    /// around its end and collide often).
    private static var minimumCapacity: Int { NarrowedCounters.slotIndexMinimumCapacity }

    /// An empty table with room for `capacity` keys before it grows.
    init(minimumCapacity capacity: Int = 0) {
        var size = Self.minimumCapacity
        while size < capacity * 2 { size *= 2 }
        entries = Array(repeating: Entry(key: 0, value: 0), count: size)
        shift = UInt64(64 - size.trailingZeroBitCount)
    }

    /// A table of `pairs`, whose keys must differ (traps otherwise, as `Dictionary` does).
    init(uniqueKeysWithValues pairs: some Sequence<(UInt64, Int)>) {
        self.init(minimumCapacity: pairs.underestimatedCount)
        for (key, value) in pairs {
            let previous = updateValue(value, forKey: key)
            precondition(previous == nil, "Internal inconsistency: key \(key) listed twice in a slot index")
        }
    }

    /// The value of `key`, or `nil` if the table does not hold it.
    @inline(__always)
    subscript(key: UInt64) -> Int? {
        guard let position = position(of: key) else { return nil }
        return entries[position].value
    }

    /// Sets the value of `key`; returns its previous value, or `nil` if the key is new.
    @discardableResult
    mutating func updateValue(_ value: Int, forKey key: UInt64) -> Int? {
        precondition(key != 0, "Internal inconsistency: key 0 in a slot index")
        var position = home(of: key)
        let mask = entries.count - 1
        while entries[position].key != 0 {
            if entries[position].key == key {
                defer { entries[position].value = value }
                return entries[position].value
            }
            position = (position + 1) & mask
        }
        if (count + 1) * 2 > entries.count {
            grow()
            return updateValue(value, forKey: key)
        }
        entries[position] = Entry(key: key, value: value)
        count += 1
        return nil
    }

    /// Removes `key`; returns its value, or `nil` if the table did not hold it.
    @discardableResult
    mutating func removeValue(forKey key: UInt64) -> Int? {
        guard var hole = position(of: key) else { return nil }
        let removed = entries[hole].value
        count -= 1
        // Shifts back each following entry of the run that may move to the hole: one whose home is
        // not between the hole and its position (cyclically), so that every key stays reachable
        // from its home without crossing an empty position.
        let mask = entries.count - 1
        var next = (hole + 1) & mask
        while entries[next].key != 0 {
            let home = home(of: entries[next].key)
            let distanceToNext = (next - home) & mask
            let distanceToHole = (hole - home) & mask
            if distanceToHole < distanceToNext {
                entries[hole] = entries[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        entries[hole] = Entry(key: 0, value: 0)
        return removed
    }

    /// The keys and their values, in no particular order.
    func makeIterator() -> some IteratorProtocol<(key: UInt64, value: Int)> {
        entries.lazy.filter { $0.key != 0 }.map { (key: $0.key, value: $0.value) }.makeIterator()
    }

    var underestimatedCount: Int { count }

    /// How many keys the table holds before it grows (for tests).
    var capacity: Int { entries.count / 2 }

    // MARK: Probing

    /// Where a search for `key` starts: the top bits of the key times 2^64 ÷ φ.
    @inline(__always)
    private func home(of key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    @inline(__always)
    private func position(of key: UInt64) -> Int? {
        assert(key != 0, "Internal inconsistency: key 0 looked up in a slot index")
        let mask = entries.count - 1
        var position = home(of: key)
        while true {
            let found = entries[position].key
            if found == key { return position }
            if found == 0 { return nil }
            position = (position + 1) & mask
        }
    }

    /// Doubles the capacity, putting every key back (each in the first empty position from its
    /// home: the keys differ, so none is searched for).
    private mutating func grow() {
        let old = entries
        entries = Array(repeating: Entry(key: 0, value: 0), count: old.count * 2)
        shift -= 1
        let mask = entries.count - 1
        for entry in old where entry.key != 0 {
            var position = home(of: entry.key)
            while entries[position].key != 0 { position = (position + 1) & mask }
            entries[position] = entry
        }
    }
}
