extension ExclusivityStateMachine {
    /// One category that keeps a waiting request from being granted, and why.
    struct Blocker: Equatable {
        /// The category.
        let category: String
        /// The operations that hold it and are not the request's ancestors, outermost first
        /// (empty if nobody holds it).
        let holders: [ObjectIdentifier]
        /// If nobody holds it: the older waiting requests that reserve it, oldest first (they go
        /// first).
        let earlierRequests: [ObjectIdentifier]
    }
}
