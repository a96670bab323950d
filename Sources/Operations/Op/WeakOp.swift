/// A weak reference to an operation, for lists that must not keep operations alive.
struct WeakOp {
    weak var operation: Op?

    init(_ operation: Op) {
        self.operation = operation
    }
}
