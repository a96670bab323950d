/// The error of an operation that did not run because the producer it injects from
/// (``Op/inject(from:_:)``) failed or was cancelled.
///
/// The consumer is cancelled, and this is its ``Op/error``:
///
/// ```swift
/// if let failure = parse.error as? InjectionError {
///     print("\(failure.producer) failed: \(failure.underlyingError)")
/// }
/// ```
public struct InjectionError: Error, CustomStringConvertible {
    /// The description of the producer (see ``Op/description``).
    public let producer: String
    /// The producer's error: the error it failed with, or, if it was cancelled without one,
    /// `CancellationError()`.
    public let underlyingError: any Error

    /// Creates the error of an injection from `producer`, which failed with `underlyingError`.
    public init(producer: String, underlyingError: any Error) {
        self.producer = producer
        self.underlyingError = underlyingError
    }

    /// Names the producer and its error.
    public var description: String {
        "The injection from \(producer) failed: \(underlyingError)"
    }
}
