import OperationsRuntimeShims

/// A fixed table of striped locks that guards the state of every ``Op``.
///
/// An operation has no lock object of its own: its state is guarded by the stripe its address
/// hashes to. This keeps a pending operation small (no extra allocation, no lock of its own)
/// while uncontended locking stays a call and one atomic instruction (see ``Lock``). Two
/// operations may share a stripe; code that needs two operations at once (adding or removing a
/// dependency) locks their stripes in index order and locks a shared stripe only once.
///
/// A stripe is held only for a pure state transition: never while calling user code, waiting,
/// or taking a queue's lock. No operation may be released while a stripe is held either: the
/// deinitialization of an operation takes the stripes of its unfinished dependencies (see
/// ``DependentLink``), so references that may be the last are released after unlocking.
enum LockTable {
    /// The number of stripes; a power of two.
    static let count = 1 << bits

    /// log2 of ``count``; the C table (`operations_stripes`) has as many (checked by
    /// `LockTableTests`).
    private static let bits = 10

    /// The stripe index for an object.
    @inline(__always)
    static func stripe(for object: AnyObject) -> Int {
        let address = UInt(bitPattern: Int(bitPattern: ObjectIdentifier(object)))
        // Fibonacci hashing spreads 16-byte-aligned addresses over the table.
        return Int(truncatingIfNeeded: (address &* 0x9E37_79B9_7F4A_7C15) >> UInt(UInt.bitWidth - bits))
    }

    /// The lock of `stripe`.
    @inline(__always)
    static func raw(_ stripe: Int) -> UnsafeMutablePointer<operations_lock> {
        operations_stripe_lock(stripe)
    }

    @inline(__always)
    static func lock(_ stripe: Int) { Lock.lock(raw(stripe)) }

    @inline(__always)
    static func unlock(_ stripe: Int) { Lock.unlock(raw(stripe)) }

    /// Runs `body` with two stripes held, taken in index order (once if they are the same).
    static func withLocks<Result>(_ first: Int, _ second: Int, _ body: () throws -> Result) rethrows -> Result {
        let low = min(first, second)
        let high = max(first, second)
        lock(low)
        if high != low { lock(high) }
        defer {
            if high != low { unlock(high) }
            unlock(low)
        }
        return try body()
    }
}
