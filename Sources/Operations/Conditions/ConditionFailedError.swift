/// The error of an operation that did not run because one of its conditions failed.
///
/// The operation is cancelled, and this is its ``Op/error``.
///
/// ```swift
/// if let failure = upload.error as? ConditionFailedError {
///     print("skipped: \(failure.condition) failed", failure.underlyingError ?? "")
/// }
/// ```
public struct ConditionFailedError: Error, CustomStringConvertible {
    /// The name of the condition that failed (for a combinator, the innermost one that decided).
    public let condition: String
    /// The error that made the condition fail, if any: the error an `async` check threw, the
    /// failed dependency's error, or, for ``OpCondition/any(_:)``, the last member's failure.
    public let underlyingError: (any Error)?
    /// Whether the failure came from a condition made with ``OpCondition/ignoringFailure(_:)``:
    /// the operation is then skipped (cancelled with no error) rather than failed.
    let skipsOperation: Bool

    /// Creates the error of a failed condition.
    public init(condition: String, underlyingError: (any Error)? = nil) {
        self.init(condition: condition, underlyingError: underlyingError, skipsOperation: false)
    }

    init(condition: String, underlyingError: (any Error)?, skipsOperation: Bool) {
        self.condition = condition
        self.underlyingError = underlyingError
        self.skipsOperation = skipsOperation
    }

    /// Names the condition, and the underlying error if there is one.
    public var description: String {
        if let underlyingError {
            return "The condition \(condition) failed: \(underlyingError)"
        }
        return "The condition \(condition) failed"
    }
}
