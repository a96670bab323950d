/// The error of an operation that did not finish within its ``Op/timeout`` or
/// ``Op/totalTimeout``.
///
/// When the time passes, the operation is cancelled with this error in ``Op/error``; ``phase``
/// tells whether it had started:
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
    /// When the timeout passed: ``Phase/running`` for ``Op/timeout``; ``Phase/waiting`` or
    /// ``Phase/running`` for ``Op/totalTimeout``, as the operation had started or not.
    public let phase: Phase

    /// Creates the error of `operation`, which did not finish within `timeout`, passed in `phase`.
    ///
    /// ```swift
    /// let error = OpTimeoutError(timeout: .seconds(5), operation: "fetch", phase: .waiting)
    /// ```
    public init(timeout: Duration, operation: String, phase: Phase = .running) {
        self.timeout = timeout
        self.operation = operation
        self.phase = phase
    }

    /// Names the operation, the timeout, and whether the operation had started.
    public var description: String {
        switch phase {
        case .running: "\(operation) did not finish within its timeout of \(timeout)"
        case .waiting: "\(operation) did not start within its total timeout of \(timeout)"
        }
    }
}
