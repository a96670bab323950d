/// The error of a ``GroupOp`` some of whose children failed.
///
/// ```swift
/// if let failure = group.error as? GroupError {
///     for error in failure.errors { print(error) }
///     if failure.droppedErrorCount > 0 { print("and \(failure.droppedErrorCount) more") }
/// }
/// ```
///
/// A group keeps the errors of the first ``errorLimit`` children that fail and only counts the
/// others, so that a group that runs for a long time holds a bounded number of errors.
public struct GroupError: Error, CustomStringConvertible {
    /// The most errors a group keeps: the errors of children that fail after that many are
    /// counted in ``droppedErrorCount`` and not kept.
    public static let errorLimit = 100

    /// The error of each child that failed (finished with a non-`nil` ``Op/error``), in the order
    /// they failed: the first ``errorLimit`` of them.
    public let errors: [any Error]

    /// How many more children failed after ``errors`` was full; their errors were not kept.
    public let droppedErrorCount: Int

    /// How many children failed: those listed in ``errors`` and the dropped ones.
    public var failureCount: Int { errors.count + droppedErrorCount }

    /// Creates the error of a group whose children failed with `errors`, and `droppedErrorCount`
    /// more whose errors were not kept.
    public init(errors: [any Error], droppedErrorCount: Int = 0) {
        self.errors = errors
        self.droppedErrorCount = droppedErrorCount
    }

    /// Counts the failures and lists the kept errors.
    public var description: String {
        let listed = errors.map { "\($0)" }.joined(separator: "; ")
        let dropped = droppedErrorCount > 0 ? "; and \(droppedErrorCount) more, not kept" : ""
        return "\(failureCount) child operation(s) of the group failed: " + listed + dropped
    }
}
