import Testing
@testable import Operations

/// ``SlotIndex`` against a `Dictionary`: random insertions, updates, removals and look-ups, with
/// the kinds of keys it is given (consecutive serial numbers, 16-byte aligned addresses) and keys
/// made to share their home position, so that runs of probes wrap around the table's end and
/// removals shift entries back across it. In the checked build the table starts at two positions
/// and grows through every size. A failure names its seed and the calls made so far.
@Suite(.offTheCooperativePool) struct SlotIndexTests {
    enum Keys: CaseIterable {
        /// Serial numbers: 1, 2, 3, ... (``DependentList``).
        case consecutive
        /// Object addresses: 16-byte aligned, close together (``DependencyList``).
        case aligned
        /// Multiples of 2^58: with 64 positions or fewer, every one has the same home.
        case colliding
    }

    static func pool(_ keys: Keys, count: Int) -> [UInt64] {
        switch keys {
        case .consecutive: (1...UInt64(count)).map { $0 }
        case .aligned: (1...UInt64(count)).map { 0x7f00_1234_0000 + $0 * 16 }
        case .colliding: (1...UInt64(count)).map { $0 << 58 }
        }
    }

    @Test(arguments: Keys.allCases, [8, 40, 300])
    func randomSequencesMapWhatADictionaryMaps(keys: Keys, targetCount: Int) {
        let pool = Self.pool(keys, count: keys == .colliding ? min(63, targetCount * 2) : targetCount * 2)
        for seed in UInt64(0)..<8 {
            var random = SplitMix64(seed: seed &* 6_151 &+ UInt64(targetCount))
            var index = SlotIndex()
            var model: [UInt64: Int] = [:]
            var trail = ModelTrail("seed \(seed), \(keys), \(targetCount) keys")
            let phase = max(60, targetCount * 4)
            for step in 0..<(4 * phase) where !trail.failed {
                // Grows towards the target, then shrinks to a few, and again.
                let growing = model.count < ((step / phase) % 2 == 0 ? targetCount : 2)
                let key = random.pick(pool)
                if random.chance(growing ? 0.65 : 0.2) {
                    let value = Int.random(in: 0..<1_000_000, using: &random)
                    trail.note("update \(key) to \(value)")
                    let previous = index.updateValue(value, forKey: key)
                    trail.verify(previous == model.updateValue(value, forKey: key), "updateValue returned \(String(describing: previous))")
                } else {
                    trail.note("remove \(key)")
                    let removed = index.removeValue(forKey: key)
                    trail.verify(removed == model.removeValue(forKey: key), "removeValue returned \(String(describing: removed))")
                }
                trail.verify(index.count == model.count, "count \(index.count), not \(model.count)")
                // Now and then every key of the pool (those held keep their values, the others are
                // absent) and the iteration; a few keys at each step.
                let probes = step % 16 == 0 ? pool : (0..<4).map { _ in random.pick(pool) }
                for probe in probes {
                    trail.verify(index[probe] == model[probe], "index[\(probe)] is \(String(describing: index[probe])), not \(String(describing: model[probe]))")
                }
                if step % 16 == 0 {
                    let listed = Dictionary(uniqueKeysWithValues: index.map { ($0.key, $0.value) })
                    trail.verify(listed == model, "iteration lists \(listed.count) keys, not the model's \(model.count)")
                }
            }
            if trail.failed { return }
        }
    }

    @Test func aTableBuiltFromPairsHoldsThemAll() {
        let pairs = (1...UInt64(1_000)).map { ($0 &* 0x10, Int($0)) }
        let index = SlotIndex(uniqueKeysWithValues: pairs)
        #expect(index.count == 1_000)
        #expect(pairs.allSatisfy { index[$0.0] == $0.1 })
        #expect(index[0x10 * 1_001] == nil)
    }

    /// A table that sees insertions and removals forever, holding about as many keys all along,
    /// does not grow: removals leave no tombstones that would fill it.
    @Test func aTableThatNeverEmptiesStaysTheSameSize() {
        var index = SlotIndex()
        for key in UInt64(1)...20 { index.updateValue(Int(key), forKey: key) }
        let capacity = index.capacity
        for key in UInt64(21)...200_000 {
            index.updateValue(Int(key), forKey: key)
            #expect(index.removeValue(forKey: key - 20) == Int(key - 20))
        }
        #expect(index.count == 20)
        #expect(index.capacity == capacity)
    }
}
