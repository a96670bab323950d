import Synchronization

extension LimitStateMachine {
    /// A counted category: its permits, counted in one atomic word, and its line of waiting
    /// requests.
    ///
    /// **The word.** The low 32 bits count the permits held, reserved or out (a rate limit's,
    /// until they come back); bit 32 says that the line has live waiters; bit 33 that the
    /// category is *retired* (no longer the table's entry for its name). An operation whose only
    /// gate is one limit takes and gives back its permit with one compare-and-swap each, without
    /// the table's lock (``takeWithoutLock()``, ``giveBackWithoutLock()``), as long as nobody
    /// waits and the category is the table's: a newcomer never overtakes the line, since the
    /// waiters bit sends it to the table. Everything else happens with the table's lock held.
    ///
    /// **Invariants** (with the table's lock held): the waiters bit is set exactly when the line
    /// has a live waiter, and then every permit is in use, and only the lock's holder changes the
    /// word (the lock-free paths leave a word with the bit set alone). A retired category counts
    /// nothing: it is retired only from a word of zero, and revived (made the table's entry again)
    /// only by the lock's holder.
    final class Category: @unchecked Sendable {
        // @unchecked Sendable: `word` is atomic; every other stored property is touched only with
        // the exclusivity table's lock held (see `Exclusivity`), and `name` and `spec` never change.

        /// The category's name.
        let name: String
        /// Its permits and how they come back.
        let spec: OpLimit.Spec
        /// The count of permits in use, the waiters bit and the retired bit (see above).
        private let word: Atomic<UInt64>
        /// The rate limit's permits that are out (included in the count), for the checks.
        var tokensOut = 0
        /// The requests waiting for a permit, first come first served; some may be dead.
        var line = RingBuffer<Record>()
        /// How many entries of ``line`` were withdrawn.
        var dead = 0

        private static let countMask: UInt64 = 0xFFFF_FFFF
        private static let waitersBit: UInt64 = 1 << 32
        private static let retiredBit: UInt64 = 1 << 33

        /// A category with no permit in use: the table's entry for `name`, or, `retired`, not yet.
        init(name: String, spec: OpLimit.Spec, retired: Bool = false) {
            self.name = name
            self.spec = spec
            self.word = Atomic(retired ? Self.retiredBit : 0)
        }

        private var permits: UInt64 { UInt64(spec.permits) }

        // MARK: Without the lock

        /// Takes a permit if one is free, nobody waits, and the category is the table's.
        /// Returns `false` otherwise: the caller asks the table.
        func takeWithoutLock() -> Bool {
            var word = self.word.load(ordering: .relaxed)
            while word & (Self.waitersBit | Self.retiredBit) == 0, word & Self.countMask < permits {
                let (exchanged, original) = self.word.compareExchange(expected: word, desired: word + 1,
                                                                      ordering: .acquiringAndReleasing)
                if exchanged { return true }
                word = original
            }
            return false
        }

        /// Gives back a permit if nobody waits for it. Returns `false` if someone does: the
        /// caller gives it back through the table, which hands it to the front of the line.
        func giveBackWithoutLock() -> Bool {
            var word = self.word.load(ordering: .relaxed)
            while word & Self.waitersBit == 0 {
                precondition(word & Self.countMask > 0, "Internal inconsistency: a permit of \(name) came back that was not taken")
                let (exchanged, original) = self.word.compareExchange(expected: word, desired: word - 1,
                                                                      ordering: .acquiringAndReleasing)
                if exchanged { return true }
                word = original
            }
            return false
        }

        // MARK: With the table's lock held

        /// How many permits are held, reserved or out.
        var inUse: Int { Int(word.load(ordering: .acquiring) & Self.countMask) }

        /// Whether a permit is in use (or, the same, the category has a permit in use or a waiter).
        var isInUse: Bool { inUse > 0 }

        /// Whether the category is no longer the table's entry for its name.
        var isRetired: Bool { word.load(ordering: .acquiring) & Self.retiredBit != 0 }

        var liveWaiters: Int { line.count - dead }

        /// Takes a permit if one is free and nobody waits. Otherwise, with `mayWait`, sets the
        /// waiters bit (the caller puts the request in the line). Returns whether it took one.
        func takeOrWait(mayWait: Bool) -> Bool {
            var word = self.word.load(ordering: .relaxed)
            while true {
                precondition(word & Self.retiredBit == 0, "Internal inconsistency: a retired category \(name) was asked for")
                let desired: UInt64
                if word & Self.waitersBit == 0 && word & Self.countMask < permits {
                    desired = word + 1
                } else if !mayWait || word & Self.waitersBit != 0 {
                    return false
                } else {
                    desired = word | Self.waitersBit
                }
                let (exchanged, original) = self.word.compareExchange(expected: word, desired: desired,
                                                                      ordering: .acquiringAndReleasing)
                if exchanged { return desired & Self.waitersBit == 0 }
                word = original
            }
        }

        /// A permit comes back and nobody waits: the count goes down (the lock-free paths may
        /// change it meanwhile).
        func release() {
            var word = self.word.load(ordering: .relaxed)
            while true {
                precondition(word & Self.waitersBit == 0 && word & Self.countMask > 0,
                             "Internal inconsistency: a permit of \(name) came back while waiters were in line, or none was taken")
                let (exchanged, original) = self.word.compareExchange(expected: word, desired: word - 1,
                                                                      ordering: .acquiringAndReleasing)
                if exchanged { return }
                word = original
            }
        }

        /// The line has no live waiter left: the lock-free paths may take and give back again.
        /// (Every permit is in use: the count stays.)
        func clearWaiters() {
            word.bitwiseAnd(~Self.waitersBit, ordering: .acquiringAndReleasing)
        }

        /// Retires the category if no permit is in use and nobody waits. Returns whether it did.
        func retireIfUnused() -> Bool {
            word.compareExchange(expected: 0, desired: Self.retiredBit, ordering: .acquiringAndReleasing).exchanged
        }

        /// Makes a retired category the table's entry again.
        func revive() {
            let (exchanged, _) = word.compareExchange(expected: Self.retiredBit, desired: 0, ordering: .acquiringAndReleasing)
            precondition(exchanged, "Internal inconsistency: the category \(name) was revived while not retired")
        }

        /// Whether the waiters bit is set (for the checks).
        var hasWaitersBit: Bool { word.load(ordering: .acquiring) & Self.waitersBit != 0 }
    }
}
