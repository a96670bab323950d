import Synchronization

/// The dependency cycles that were found and reported but not ended: each is left alone while it
/// can still be broken, and ended once all its operations are in queues and it has stayed
/// unbroken for ``OpQueue/dependencyCycleGracePeriod``.
///
/// A watched cycle holds its operations weakly; it is forgotten when it is ended, found broken,
/// or when one of its operations finishes or is released.
enum CycleWatch {
    /// One watched cycle.
    final class Entry: @unchecked Sendable {
        // @unchecked Sendable: immutable, except `isArmed`, which is only touched with the
        // watch's lock held.
        let operations: [WeakOp]
        let barrierEdges: [Bool]
        let error: DependencyCycleError
        /// Whether the grace period is running (every operation is in a queue).
        var isArmed = false

        init(_ cycle: DependencyCycle) {
            operations = cycle.operations.map(WeakOp.init)
            barrierEdges = cycle.barrierEdges
            error = cycle.error
        }

        /// The cycle, if every operation is still alive.
        var cycle: DependencyCycle? {
            let alive = operations.compactMap(\.operation)
            guard alive.count == operations.count else { return nil }
            return DependencyCycle(path: alive, barrierEdges: barrierEdges)
        }

        /// Whether the cycle can no longer hold anything back: an operation is gone or finished.
        var isStale: Bool {
            operations.contains { $0.operation?.isFinished ?? true }
        }
    }

    /// The watched cycles, by ``DependencyCycle/key``.
    private static let entries = LockedBox<[[UInt64]: Entry]>([:])

    /// How many cycles are watched; relaxed: a hint that lets enqueueing skip the watch.
    static let count = Atomic<Int>(0)

    /// The grace period in nanoseconds (see ``OpQueue/dependencyCycleGracePeriod``); relaxed: a
    /// setting read when a cycle is armed.
    static let gracePeriodNanoseconds = Atomic<Int64>(1_000_000_000)

    /// Starts watching `cycle`; returns `false` if it was watched already (and so reported). The
    /// caller reports a new cycle, then calls ``armIfEnqueued(_:)``.
    static func watch(_ cycle: DependencyCycle) -> Bool {
        let key = cycle.key
        // Stale entries are found outside the lock: loading a weak reference makes a strong one,
        // whose release may be the last and run a deinit.
        let stale = entries.withLockedValue { $0 }.filter { $0.value.isStale }
        let (isNew, dropped): (Bool, [Entry]) = entries.withLockedValue { entries in
            var dropped: [Entry] = []
            for (staleKey, entry) in stale where entries[staleKey] === entry {
                dropped.append(entries.removeValue(forKey: staleKey)!)
            }
            defer { count.store(entries.count, ordering: .relaxed) }
            guard entries[key] == nil else { return (false, dropped) }
            entries[key] = Entry(cycle)
            return (true, dropped)
        }
        withExtendedLifetime(dropped) {}
        return isNew
    }

    /// The keys of the cycles being ended now (see ``claimEnding(_:)``).
    private static let ending = LockedBox<Set<[UInt64]>>([])

    /// Claims the end of the cycle with `key`: returns `false` if another caller is ending it.
    /// A waiter and the grace-period timer may both try to end one cycle at the same moment; the
    /// check that it is intact and the marks that end it are one step for one caller only, or
    /// both could find it intact and report its end twice. The claimer calls
    /// ``releaseEnding(_:)`` when it is done.
    static func claimEnding(_ key: [UInt64]) -> Bool {
        ending.withLockedValue { $0.insert(key).inserted }
    }

    /// Ends the claim taken with ``claimEnding(_:)``.
    static func releaseEnding(_ key: [UInt64]) {
        _ = ending.withLockedValue { $0.remove(key) }
    }

    /// Stops watching the cycle with `key` (it was ended, or found broken).
    static func forget(_ key: [UInt64]) {
        let removed = entries.withLockedValue { entries in
            defer { count.store(entries.count, ordering: .relaxed) }
            return entries.removeValue(forKey: key)
        }
        withExtendedLifetime(removed) {}
    }

    /// Some operations were added to a queue: a watched cycle whose operations are now all in
    /// queues starts its grace period. Callers skip it while ``count`` is zero.
    static func noteEnqueued<Operations: Sequence<Op>>(_ operations: Operations) {
        let serials = Set(operations.map(\.serial))
        let keys = entries.withLockedValue { entries in
            entries.filter { !$0.value.isArmed && $0.key.contains(where: serials.contains) }.map(\.key)
        }
        for key in keys {
            armIfEnqueued(key)
        }
    }

    /// Starts the grace period of the cycle with `key` if every operation of it is in a queue.
    static func armIfEnqueued(_ key: [UInt64]) {
        guard let entry = entries.withLockedValue({ $0[key] }), let cycle = entry.cycle else { return }
        let allEnqueued = cycle.operations.allSatisfy { operation in
            operation.withState { $0.lifecycle == .pending && $0.isEnqueued }
        }
        guard allEnqueued else { return }
        let arms: Bool = entries.withLockedValue { entries in
            guard let current = entries[key], current === entry, !entry.isArmed else { return false }
            entry.isArmed = true
            return true
        }
        guard arms else { return }
        let grace = gracePeriodNanoseconds.load(ordering: .relaxed)
        DeadlineTimer.run(after: .nanoseconds(Int64(clamping: grace))) {
            graceExpired(key, entry: entry)
        }
    }

    /// The cycle with `key` stayed watched for the grace period: end it if it is still intact.
    private static func graceExpired(_ key: [UInt64], entry: Entry) {
        let current = entries.withLockedValue { $0[key] }
        guard current === entry else { return }   // ended or forgotten meanwhile
        if let cycle = entry.cycle {
            DependencyCycles.end(cycle)
        }
        forget(key)
    }
}
