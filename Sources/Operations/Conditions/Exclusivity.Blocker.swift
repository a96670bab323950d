extension Exclusivity {
    /// One category that keeps an operation waiting (see ``ExclusivityStateMachine/Blocker``),
    /// with the operations it names.
    struct Blocker {
        /// The category.
        let category: String
        /// The operations that hold it, outermost first.
        let holders: [Op]
        /// If nobody holds it: the operations whose older requests reserve it, oldest first.
        let earlierRequests: [Op]
    }
}
