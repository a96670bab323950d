#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value that any thread may read and change, one thread at a time, for the examples' shared
/// state.
///
/// A pthread mutex guards it rather than `Synchronization.Mutex`: with current toolchains,
/// ThreadSanitizer on Linux does not see `Mutex` as synchronization and reports false races, and
/// CI runs the examples under ThreadSanitizer. In your own code, `Mutex` is the usual choice.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is read and written only inside `withLock`, with `mutex` held;
    // the pointer never changes after `init`.
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A lock around `value`.
    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the lock held, giving it the value to read or change.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
