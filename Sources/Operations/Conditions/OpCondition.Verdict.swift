extension OpCondition {
    /// What evaluating a condition for an operation came to (see ``OpCondition/evaluate(for:)``).
    public enum Verdict: Sendable, CustomStringConvertible {
        /// The condition passed: the operation would run.
        case passed
        /// The condition failed: the operation would be cancelled with this error.
        case failed(ConditionFailedError)
        /// A condition made with ``OpCondition/ignoringFailure(_:)`` failed: the operation would
        /// be skipped, cancelled with no error. The failure says which condition and why.
        case skipped(ConditionFailedError)

        /// Whether the condition passed.
        public var passed: Bool {
            if case .passed = self { true } else { false }
        }

        /// The failure, for a condition that failed or skips the operation.
        public var failure: ConditionFailedError? {
            switch self {
            case .passed: nil
            case .failed(let failure), .skipped(let failure): failure
            }
        }

        /// "passed", or "failed: …" or "skipped: …" with the failure.
        public var description: String {
            switch self {
            case .passed: "passed"
            case .failed(let failure): "failed: \(failure)"
            case .skipped(let failure): "skipped: \(failure)"
            }
        }
    }
}
