extension Op {
    /// The relative order in which an operation's queue starts it among the operations that are
    /// ready at the same time, as in Foundation's `Operation.QueuePriority`.
    ///
    /// Priority never overrides dependencies: a ready low-priority operation starts before a
    /// high-priority one that is still waiting for its dependencies. It orders operations of one
    /// queue only.
    ///
    /// Among ready operations of equal priority, the queue starts first the one that has waited
    /// longest at that priority: an operation whose priority changes while it waits goes behind
    /// the others of its new level. This holds however often priorities change and however long
    /// the queue lives.
    public enum QueuePriority: Int, Sendable, Hashable, CaseIterable, Comparable {
        /// The lowest priority.
        case veryLow = -8
        /// A low priority.
        case low = -4
        /// The default priority.
        case normal = 0
        /// A high priority.
        case high = 4
        /// The highest priority.
        case veryHigh = 8

        /// Creates the priority nearest to `value`, moving toward ``normal`` between two
        /// levels, the way Foundation adjusts values that are not one of the constants.
        public init(approximating value: Int) {
            switch value {
            case ...(-8): self = .veryLow
            case -7 ... -4: self = .low
            case -3 ... 3: self = .normal
            case 4 ... 7: self = .high
            default: self = .veryHigh
            }
        }

        /// Orders priorities from ``veryLow`` to ``veryHigh``.
        public static func < (lhs: QueuePriority, rhs: QueuePriority) -> Bool {
            lhs.rawValue < rhs.rawValue
        }

        /// The index of this level's ready list, 0 for `veryHigh` through 4 for `veryLow`.
        var readyListIndex: Int {
            (8 - rawValue) / 4
        }
    }
}
