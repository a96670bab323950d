/// A value that can only be read or written with its lock held.
final class LockedBox<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only accessed inside `withLockedValue`, under `lock`.
    private let lock = Lock()
    // The lock makes every access exclusive: the runtime's check is left to the checked build.
    #if OPERATIONS_INTERNAL_CHECKS
    private var value: Value
    #else
    @exclusivity(unchecked) private var value: Value
    #endif

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` on the value with the lock held. `body` must not call user code.
    @inline(__always)
    func withLockedValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(&value) }
    }
}
