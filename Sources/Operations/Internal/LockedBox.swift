/// A value that can only be read or written with its lock held.
final class LockedBox<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only accessed inside `withLockedValue`, under `lock`.
    private let lock = Lock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` on the value with the lock held. `body` must not call user code.
    @inline(__always)
    func withLockedValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(&value) }
    }
}
