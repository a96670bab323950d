import Testing

/// What a randomised test against a reference model did, and its first failure.
///
/// The model tests of the library's lists play random calls on the structure and on a plain
/// model side by side; the first difference is recorded once, with the sequence's name (its seed
/// and parameters) and the last calls made, so that it can be replayed. Later differences of the
/// same sequence follow from the first and are not recorded.
struct ModelTrail {
    /// Names the sequence in a failure: its seed and parameters.
    let name: String
    /// How many of the last calls a failure lists.
    let shownCalls: Int
    private var calls: [String] = []
    /// Whether a difference was recorded.
    private(set) var failed = false

    init(_ name: String, shownCalls: Int = 40) {
        self.name = name
        self.shownCalls = shownCalls
    }

    /// Notes a call made on the structure (and the model).
    mutating func note(_ call: String) {
        calls.append(call)
    }

    /// Records `what` as this sequence's failure unless `condition` holds (or a failure is
    /// recorded already).
    mutating func verify(_ condition: Bool, _ what: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard !condition, !failed else { return }
        failed = true
        Issue.record("\(name): \(what()) after \(calls.suffix(shownCalls).joined(separator: ", "))", sourceLocation: sourceLocation)
    }
}
