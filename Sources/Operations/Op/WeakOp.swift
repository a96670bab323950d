/// A weak reference to an operation, for lists that must not keep operations alive.
struct WeakOp {
    weak var operation: Op?
    /// The operation's serial number, known even after it is gone.
    let serial: UInt64

    init(_ operation: Op) {
        self.operation = operation
        self.serial = operation.serial
    }
}
