// Counted categories: limits and rate limits across queues (see `LimitStateMachine`).

extension OpCondition {
    /// At most `permits` operations with this condition and the same `category` execute at once,
    /// across every queue of the process.
    ///
    /// A permit is taken when the operation starts (its queue has a slot for it, the queue is
    /// not suspended, no barrier holds it back; or on the thread that calls ``Op/start()``) and
    /// given back when it finishes, whether it succeeded, failed or was cancelled. While no permit
    /// is free, the operation waits without holding a slot of its queue or a thread; waiting
    /// operations get permits first come, first served. One that is cancelled while it waits
    /// leaves at once and finishes without running. An operation whose queue is suspended keeps
    /// nobody waiting: it asks again once the queue resumes.
    ///
    /// ```swift
    /// // At most 4 database connections in use, whichever queue the work comes from.
    /// static let database = OpCondition.limited("database", permits: 4)
    ///
    /// let migrate = BlockOp { try? runMigration() }
    /// migrate.addCondition(database)
    /// maintenance.addOperation(migrate)
    ///
    /// let report = BlockOp { buildReport() }
    /// report.addCondition(database)
    /// requests.addOperation(report)
    /// ```
    ///
    /// `limited(c, permits: 1)` is ``mutuallyExclusive(_:)`` (`c` is one category, honoured with
    /// groups as described there). A category is one table entry for the whole process, kept
    /// while an operation holds or waits for one of its permits and forgotten afterwards.
    ///
    /// An operation with several categories takes its exclusive ones first and then its counted
    /// ones, one after the other in the order of their names, holding those it took while it waits
    /// for the next (the fixed order rules out operations waiting for each other in a circle). A
    /// group's children do not run under the group's permit: each takes its own, so a group that
    /// waits for children of its own category needs a permit for them too.
    ///
    /// It always passes; use it on its own or inside ``all(_:)``.
    ///
    /// An operation whose only condition is one limit takes its permit as it starts, and gives it
    /// back as it finishes, with one atomic operation each while no operation waits for the
    /// category: no lock is shared between the queues. (Other operations of the category, and
    /// any while operations wait, go through the process-wide table and its lock.)
    ///
    /// - Parameters:
    ///   - category: The name shared by the operations that the limit counts together.
    ///   - permits: How many of them may execute at once; positive.
    /// - Important: Every declaration of `category` must give the same `permits`; two
    ///   declarations that differ (also ``mutuallyExclusive(_:)`` against more than one permit,
    ///   or ``limited(_:permits:)`` against ``rateLimited(_:permits:per:clock:)``) trap when an
    ///   operation asks for the category while one of the other declaration holds or waits for
    ///   it. Declare the condition once and share it.
    public static func limited(_ category: String, permits: Int) -> OpCondition {
        if permits <= 0 {
            misuse("limited(\"\(category)\", permits: \(permits)): permits must be positive. Give the number of operations that may execute at once.")
        }
        if permits == 1 {
            return OpCondition(name: "limited(\(category), permits: 1)", kind: .mutuallyExclusive(category))
        }
        let spec = OpLimit.Spec(permits: permits, interval: nil)
        let limit = OpLimit(category: category, spec: spec, clock: nil, bound: Exclusivity.declare(category, spec))
        return OpCondition(name: limit.description, kind: .limited(limit))
    }

    /// At most `permits` operations with this condition and the same `category` start within any
    /// window of length `interval`, across every queue of the process.
    ///
    /// Each start takes a permit that comes back one `interval` later, measured by `clock` from
    /// the moment the operation starts, however long it runs: a burst of up to `permits` starts
    /// at once is allowed, then one more each time a permit comes back. The permit is taken at the
    /// start itself, not when the conditions are evaluated: an operation that waits for a slot of
    /// its queue holds no permit (and one whose turn came, with a permit reserved for it, starts
    /// its interval only when it starts), so the window holds for the starts you can observe.
    ///
    /// While no permit is free, the operation waits without holding a slot of its queue or a
    /// thread: a permit comes back by a task sleeping on `clock` on ``OpTaskExecutor/shared``.
    /// Waiting operations get permits first come, first served; one that is cancelled while it
    /// waits leaves at once and finishes without running, and takes no permit.
    ///
    /// ```swift
    /// // The API allows 10 calls per second.
    /// static let api = OpCondition.rateLimited("api.example.com", permits: 10, per: .seconds(1))
    ///
    /// for id in ids {
    ///     let fetch = AsyncBlockOp { try await client.fetch(id) }
    ///     fetch.addCondition(api)
    ///     queue.addOperation(fetch)
    /// }
    /// ```
    ///
    /// In tests, pass a clock you advance by hand: the permits come back when it reaches the end
    /// of their intervals, with no real waiting.
    ///
    /// It always passes; use it on its own or inside ``all(_:)``. A category is kept while a
    /// permit is out or an operation waits for one, and forgotten afterwards.
    ///
    /// - Parameters:
    ///   - category: The name shared by the operations that the rate limit counts together.
    ///   - permits: How many of them may start within one interval; positive.
    ///   - interval: How long after a start its permit comes back; positive.
    ///   - clock: The clock that measures `interval`.
    /// - Important: Every declaration of `category` must give the same `permits` and `interval`;
    ///   two that differ trap when an operation asks for the category while one of the other
    ///   declaration holds a permit or waits for one. (The clock is the declaration's own: each
    ///   permit comes back by the clock of the operation that took it.)
    public static func rateLimited(_ category: String, permits: Int, per interval: Duration,
                                   clock: any Clock<Duration> = ContinuousClock()) -> OpCondition {
        if permits <= 0 {
            misuse("rateLimited(\"\(category)\", permits: \(permits), per: \(interval)): permits must be positive. Give the number of starts allowed within one interval.")
        }
        if interval <= .zero {
            misuse("rateLimited(\"\(category)\", permits: \(permits), per: \(interval)): the interval must be positive. Give the length of the window in which at most \(permits) operations start.")
        }
        let limit = OpLimit(category: category, spec: OpLimit.Spec(permits: permits, interval: interval), clock: clock)
        return OpCondition(name: limit.description, kind: .limited(limit))
    }
}
