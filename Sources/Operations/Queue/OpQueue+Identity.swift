extension OpQueue: Hashable {
    /// Whether two references name the same queue (identity, as for `NSObject`).
    public static func == (lhs: OpQueue, rhs: OpQueue) -> Bool {
        lhs === rhs
    }

    /// Hashes the queue's identity.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
