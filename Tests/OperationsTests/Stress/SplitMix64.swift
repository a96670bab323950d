/// A small seeded random number generator (SplitMix64): the same seed always generates the same
/// stress scenario, so that a failing run can be replayed from its printed seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    /// Creates a generator whose sequence is determined by `seed`.
    init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `true` with the given probability.
    mutating func chance(_ probability: Double) -> Bool {
        probability > 0 && Double.random(in: 0..<1, using: &self) < probability
    }

    /// A random element of a non-empty collection.
    mutating func pick<C: RandomAccessCollection>(_ elements: C) -> C.Element {
        elements.randomElement(using: &self)!
    }
}
