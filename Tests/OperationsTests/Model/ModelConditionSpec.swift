/// A condition in a model sequence, each with a verdict the reference model can tell in advance.
enum ModelConditionSpec: Codable, Hashable, Sendable {
    /// `.predicate`, returning the value.
    case predicate(Bool)
    /// `.evaluate` (asynchronous), returning the value after a suspension.
    case evaluate(Bool)
    /// `.evaluate` that throws: fails, carrying the error.
    case evaluateThrows
    case noFailedDependencies
    case noCancelledDependencies
    /// `.mutuallyExclusive` with the sequence's category number.
    case exclusive(Int)
    /// `.dependency(op)`: `op` runs first, and must succeed.
    case dependency(Int)
    /// `.not(.predicate(value))`.
    case not(Bool)
    /// `.any([.predicate(first), .predicate(second)])`.
    case any(Bool, Bool)
    /// `.evaluate` that cancels its own operation while it is being checked, then passes.
    case cancelsItsOperation
    /// `.evaluate` that cancels its own operation, then waits until its task sees the
    /// cancellation (a "wait until reachable" check, the shape of defect 18), then passes.
    case cancelsItsOperationAndWaits

    var isAsynchronous: Bool {
        switch self {
        case .evaluate, .evaluateThrows, .cancelsItsOperation, .cancelsItsOperationAndWaits: true
        case .predicate, .noFailedDependencies, .noCancelledDependencies, .exclusive, .dependency, .not, .any: false
        }
    }

    /// The exclusivity category number, if it is one.
    var category: Int? {
        if case .exclusive(let category) = self { return category }
        return nil
    }

    /// The name of the condition as the library reports it when it decides a failure, or `nil`
    /// for a combinator (whose reported name is the innermost that decided, not checked here).
    var failureName: String? {
        switch self {
        case .predicate(let value): value ? "pass" : "fail"
        case .evaluate(let value): value ? "asyncPass" : "asyncFail"
        case .evaluateThrows: "asyncThrows"
        case .noFailedDependencies: "noFailedDependencies"
        case .noCancelledDependencies: "noCancelledDependencies"
        case .exclusive: nil
        case .dependency: nil
        case .not, .any: nil
        case .cancelsItsOperation: "cancelsItsOperation"
        case .cancelsItsOperationAndWaits: "waitsForCancellation"
        }
    }

    /// The Swift that makes it, for printed sequences.
    var swift: String {
        switch self {
        case .predicate(let value): ".predicate(\"\(value ? "pass" : "fail")\") { _ in \(value) }"
        case .evaluate(let value): ".evaluate(\"\(value ? "asyncPass" : "asyncFail")\") { _ in await Task.yield(); return \(value) }"
        case .evaluateThrows: ".evaluate(\"asyncThrows\") { _ in throw ModelWorkError.thrown }"
        case .noFailedDependencies: ".noFailedDependencies"
        case .noCancelledDependencies: ".noCancelledDependencies"
        case .exclusive(let category): ".mutuallyExclusive(\"c\(category)\")"
        case .dependency(let op): ".dependency(op\(op))"
        case .not(let value): ".not(.predicate(\"inner\") { _ in \(value) })"
        case .any(let first, let second): ".any([.predicate(\"a\") { _ in \(first) }, .predicate(\"b\") { _ in \(second) }])"
        case .cancelsItsOperation: ".evaluate(\"cancelsItsOperation\") { op in op.cancel(); return true }"
        case .cancelsItsOperationAndWaits: ".evaluate(\"waitsForCancellation\") { op in op.cancel(); while !Task.isCancelled { await Task.yield() }; return true }"
        }
    }
}
