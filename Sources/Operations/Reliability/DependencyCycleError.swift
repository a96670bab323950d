/// Operations that wait for each other in a cycle, so that none of them could ever start.
///
/// In Apple's model a dependency cycle keeps the operations on it from ever running. Here a cycle
/// is reported to ``OpDiagnostics`` as soon as the library finds it, and left alone while it can
/// still be broken (by cancelling one of its operations, or removing one of its dependencies).
/// Where it would freeze otherwise (something waits for one of its operations, or all of them are
/// in queues and it has stayed unbroken for ``OpQueue/dependencyCycleGracePeriod``), the library
/// ends it: every operation on the cycle is cancelled, so its body does not run and its dependents
/// go on, and gets this error in ``Op/error``. See <doc:Reliability>.
/// ``Op/checkForDependencyCycles(in:)`` throws it before anything runs.
public struct DependencyCycleError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The operations on the cycle, each described by its name where set (``Op/description``),
    /// in dependency order: each one depends on the next, and the last depends on the first. The
    /// first is the one created first.
    public let operations: [String]

    /// The lines of ``OpQueue/dump()`` that show the cycle's operations in their queues, taken
    /// when the cycle was reported: what holds each of them. `nil` if none was in a queue.
    ///
    /// Only the errors given to ``OpDiagnostics`` carry it (their ``OpDiagnostics/Diagnostic``
    /// description ends with it); the error an operation keeps in ``Op/error`` does not. It is not
    /// part of the error's identity (`==`, `hash(into:)`) nor of its ``description``.
    public internal(set) var queueDump: String?

    /// Creates the error for the operations on a cycle.
    public init(operations: [String]) {
        self.operations = operations
    }

    /// The error with `queueDump` attached (see ``queueDump``).
    func withQueueDump(_ queueDump: String?) -> DependencyCycleError {
        var error = self
        error.queueDump = queueDump
        return error
    }

    /// Whether two errors name the same operations, in the same order (``queueDump`` aside).
    public static func == (lhs: DependencyCycleError, rhs: DependencyCycleError) -> Bool {
        lhs.operations == rhs.operations
    }

    /// Hashes the operations' descriptions (``queueDump`` aside).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(operations)
    }

    /// The cycle as a line: each operation, an arrow to the next, and back to the first, followed
    /// by "(each depends on the next)".
    var loop: String {
        "\((operations + operations.prefix(1)).joined(separator: " → ")) (each depends on the next)"
    }

    /// A sentence naming the operations and saying what to do.
    public var description: String {
        "Dependency cycle: \(loop). None of them could ever start, so they were cancelled with this error. Remove one of these dependencies (removeDependency(_:)), or cancel one of the operations, before waiting for them."
    }
}
