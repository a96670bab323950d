extension GroupOp {
    /// What a group does with the error of a child that failed, before the failure counts (see
    /// ``GroupOp/childErrorPolicy``): ProcedureKit's hook for a group to recover from expected
    /// failures instead of failing.
    ///
    /// The child keeps its own ``Op/error`` whatever the policy: its dependents and its
    /// observers see it. The policy decides only whether the group lists the error (in its
    /// ``GroupError``), and whether it counts as the first failure for
    /// ``GroupOp/cancelsChildrenOnFailure``.
    public enum ChildErrorPolicy: Sendable {
        /// The error counts (the default): the group fails with a ``GroupError`` listing it.
        case record
        /// Errors of children do not count: the group succeeds unless it fails another way.
        case ignore
        /// `transform` decides, for each child that failed: it returns the error to count (the
        /// child's, or another), or `nil` to ignore it. It runs on the thread that finished the
        /// child, before the child's dependents are told, with no lock held.
        case transform(@Sendable (_ child: Op, _ error: any Error) -> (any Error)?)
    }
}
