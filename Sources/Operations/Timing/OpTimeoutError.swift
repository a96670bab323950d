/// The error of an operation that did not finish within its ``Op/timeout``.
///
/// When the time passes, the operation is cancelled with this error in ``Op/error``:
///
/// ```swift
/// fetch.timeout = .seconds(5)
/// fetch.completionBlock = {
///     if let timedOut = fetch.error as? OpTimeoutError {
///         print("gave up after \(timedOut.timeout)")
///     }
/// }
/// ```
public struct OpTimeoutError: Error, Equatable, CustomStringConvertible {
    /// The timeout that passed.
    public let timeout: Duration
    /// The description of the operation that timed out.
    public let operation: String

    /// Creates the error of `operation`, which did not finish within `timeout`.
    public init(timeout: Duration, operation: String) {
        self.timeout = timeout
        self.operation = operation
    }

    /// Names the operation and the timeout.
    public var description: String {
        "\(operation) did not finish within its timeout of \(timeout)"
    }
}
