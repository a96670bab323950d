extension QueueDump {
    /// One thing that keeps a member from starting (or, for an executing group, from finishing).
    enum Hold: Sendable, Equatable {
        /// Its `count` unfinished dependencies; `shown` names some of them.
        case dependencies(count: Int, shown: [Related])
        /// Its conditions, evaluated once the dependencies have finished.
        case conditionsAfterDependencies([String])
        /// Its conditions, being evaluated (or about to be).
        case evaluatingConditions([String])
        /// A mutual-exclusivity category it asked for: held by `holders`, or (none holding it)
        /// asked for earlier by `earlierRequests`, which go first.
        case exclusivity(category: String, holders: [Related], earlierRequests: [Related])
        /// The pending barrier added before it.
        case barrier(Related)
        /// A barrier: the `count` members added before it (since the barrier before it), which
        /// must leave the queue first; `shown` names some of them.
        case earlierOperations(count: Int, shown: [Related])
        /// An executing group: its `count` unfinished children; `shown` names some of them.
        case children(count: Int, shown: [Related])
        /// The queue is suspended.
        case suspended
        /// Every slot of the queue's width is taken: `running` of `width`.
        case slot(running: Int, width: Int)
        /// Nothing holds it: the queue is about to start it.
        case aboutToStart
    }
}
