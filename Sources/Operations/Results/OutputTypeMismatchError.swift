/// The error of ``Op/value(as:)`` when the operation does not produce the type asked for.
///
/// It is thrown once the operation has finished, whatever its outcome, so that the mistake shows
/// on every run, not only on the runs where the operation succeeds:
///
/// ```swift
/// let count = ResultOp { rows.count }          // produces Int
/// queue.addOperation(count)
/// do {
///     let text = try await count.value(as: String.self)
/// } catch let mismatch as OutputTypeMismatchError {
///     print(mismatch)   // ... produces Int, not String. Ask for Int.self ...
/// }
/// ```
///
/// The mistake is in the program, not in the work: ask for the type the operation produces, or
/// keep the operation's own type and await its typed ``ProducesOutput/value`` (for a retry, make
/// it a ``TypedRetryOp``).
public struct OutputTypeMismatchError: Error, CustomStringConvertible {
    /// The description of the operation that was asked (see ``Op/description``).
    public let operation: String
    /// The name of the type asked for.
    public let expectedType: String
    /// The name of the type the operation produces, or `nil` if it produces no output (a
    /// ``BlockOp``, an ``AsyncOp`` or a ``GroupOp``, say).
    public let actualType: String?

    /// Creates the error of asking `operation` for a value of the type named `expectedType`, when
    /// it produces the type named `actualType` (`nil`: no output).
    public init(operation: String, expectedType: String, actualType: String?) {
        self.operation = operation
        self.expectedType = expectedType
        self.actualType = actualType
    }

    /// The error of asking `operation` for a `expected`, when it produces `actual` (`nil`: no
    /// output). Types are named as written in code, or with their module when the two names
    /// would read alike.
    init(operation: Op, expected: Any.Type, actual: Any.Type?) {
        var expectedName = String(describing: expected)
        var actualName = actual.map { String(describing: $0) }
        if let actual, actualName == expectedName {
            expectedName = String(reflecting: expected)
            actualName = String(reflecting: actual)
        }
        self.init(operation: operation.description, expectedType: expectedName, actualType: actualName)
    }

    /// Names the operation and both types, and says what to do.
    public var description: String {
        guard let actualType else {
            return "value(as: \(expectedType).self) was awaited on \(operation), which produces no output. "
                + "Ask for Void.self to wait for it and see whether it failed, or make the work an operation that produces a \(expectedType) (a ResultOp or an AsyncBlockOp)."
        }
        return "value(as: \(expectedType).self) was awaited on \(operation), which produces \(actualType), not \(expectedType). "
            + "Ask for \(actualType).self, or keep the operation's own type and await its typed `value` (make a retry a TypedRetryOp)."
    }
}
