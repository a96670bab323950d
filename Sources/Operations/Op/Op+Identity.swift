extension Op: Hashable {
    /// Whether two references name the same operation (identity, as for `NSObject`).
    public static func == (lhs: Op, rhs: Op) -> Bool {
        lhs === rhs
    }

    /// Hashes the operation's identity.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
