/// What a ``OpCondition/limited(_:permits:)`` or ``OpCondition/rateLimited(_:permits:per:clock:)``
/// condition asks for: a permit of a counted category, held while the operation runs (a limit)
/// or for one interval from its start (a rate limit). See ``LimitStateMachine``.
struct OpLimit: Sendable, CustomStringConvertible {
    /// The category's name, shared with ``OpCondition/mutuallyExclusive(_:)``.
    let category: String
    /// How many permits the category has, and, for a rate limit, how long a permit stays taken.
    let spec: Spec
    /// The clock that measures a rate limit's interval (`nil` for a limit).
    let clock: (any Clock<Duration>)?
    /// For a limit (no interval), the category it was bound to when it was declared: an
    /// operation whose only gate it is takes and gives back its permit there without the table's
    /// lock while the category is the table's entry for its name and nobody waits (see
    /// ``LimitStateMachine/Category``). `nil` for a rate limit, and for limits made by tests of
    /// the machine alone: they always go through the table.
    let bound: LimitStateMachine.Category?

    init(category: String, spec: Spec, clock: (any Clock<Duration>)?, bound: LimitStateMachine.Category? = nil) {
        self.category = category
        self.spec = spec
        self.clock = clock
        self.bound = bound
    }

    /// The permits of a category and how they come back: every declaration of a category must
    /// name the same (see ``LimitStateMachine``).
    struct Spec: Equatable, Sendable, CustomStringConvertible {
        /// How many operations may hold a permit at once.
        let permits: Int
        /// For a rate limit, how long after an operation's start its permit comes back; `nil`:
        /// it comes back when the operation finishes.
        let interval: Duration?

        var description: String {
            if let interval { "rateLimited(permits: \(permits), per: \(interval))" } else { "limited(permits: \(permits))" }
        }
    }

    var description: String {
        if let interval = spec.interval {
            "rateLimited(\(category), permits: \(spec.permits), per: \(interval))"
        } else {
            "limited(\(category), permits: \(spec.permits))"
        }
    }
}

extension OpLimit {
    /// `existing` and `added`, one limit per category, sorted by category (the order in which an
    /// operation takes them). A category named twice with different specs traps.
    static func merged(_ existing: [OpLimit], _ added: [OpLimit]) -> [OpLimit] {
        if existing.isEmpty && added.count == 1 { return added }   // the common case: one limit
        var byCategory: [String: OpLimit] = [:]
        for limit in existing + added {
            if let other = byCategory[limit.category], other.spec != limit.spec {
                LimitStateMachine.mismatch(limit.category, other.spec, limit.spec)
            }
            byCategory[limit.category] = byCategory[limit.category] ?? limit
        }
        return byCategory.values.sorted { $0.category < $1.category }
    }
}
