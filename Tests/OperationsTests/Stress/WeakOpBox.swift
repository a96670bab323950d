@testable import Operations

/// A weak reference to an operation, safe to set and read from any thread: it lets the harness
/// check that finished operations are released, and lets the driver cancel a child operation
/// only if it exists.
final class WeakOpBox: Sendable {
    private struct Reference {
        weak var operation: Op?
    }

    private let reference = LockedBox(Reference())

    init() {}

    var operation: Op? {
        reference.withLockedValue { $0.operation }
    }

    func set(_ operation: Op) {
        reference.withLockedValue { $0.operation = operation }
    }
}
