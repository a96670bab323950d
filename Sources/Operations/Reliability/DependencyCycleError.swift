/// Operations that wait for each other in a cycle, so that none of them could ever start.
///
/// In Apple's model a dependency cycle keeps the operations on it from ever running. Here a cycle never freezes silently: when the library finds one (see
/// <doc:Reliability>), it ends every operation on the cycle with this error in ``Op/error``
/// (the operations are cancelled, so their bodies do not run, and their dependents go on), removes
/// the dependencies between them (so that they can be released), and reports it to
/// ``OpDiagnostics``. ``Op/checkForDependencyCycles(in:)`` throws it before
/// anything runs.
public struct DependencyCycleError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The operations on the cycle, each described by its name where set (``Op/description``),
    /// in dependency order: each one depends on the next, and the last depends on the first.
    public let operations: [String]

    /// Creates the error for the operations on a cycle.
    public init(operations: [String]) {
        self.operations = operations
    }

    /// A sentence naming the operations and saying what to do.
    public var description: String {
        let loop = (operations + operations.prefix(1)).joined(separator: " → ")
        return "Dependency cycle: \(loop) (each depends on the next). None of them could ever start, so they were cancelled with this error. Remove one of these dependencies (removeDependency(_:))."
    }
}
