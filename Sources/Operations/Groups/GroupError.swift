/// The error of a ``GroupOp`` some of whose children failed.
///
/// ```swift
/// if let failure = group.error as? GroupError {
///     for error in failure.errors { print(error) }
/// }
/// ```
public struct GroupError: Error, CustomStringConvertible {
    /// The error of each child that failed (finished with a non-`nil` ``Op/error``), in the order
    /// they failed.
    public let errors: [any Error]

    /// Creates the error of a group whose children failed with `errors`.
    public init(errors: [any Error]) {
        self.errors = errors
    }

    /// Counts the failures and lists them.
    public var description: String {
        "\(errors.count) child operation(s) of the group failed: " + errors.map { "\($0)" }.joined(separator: "; ")
    }
}
