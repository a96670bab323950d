/// The input a ``RetryOp`` made with `input:` received by injection, kept for its attempts.
final class InputBox<Value: Sendable>: Sendable {
    private let stored = LockedBox<Value?>(nil)

    /// Keeps the injected value (the injection runs before the retry starts).
    func store(_ value: Value) {
        stored.withLockedValue { $0 = value }
    }

    /// The injected value. An attempt is made only once the injection ran (it runs before the
    /// retry starts, and a failed input cancels the retry before any attempt).
    func value(for kind: String) -> Value {
        guard let value = stored.withLockedValue({ $0 }) else {
            preconditionFailure("Internal inconsistency: a \(kind) made an attempt before its input was injected")
        }
        return value
    }
}
