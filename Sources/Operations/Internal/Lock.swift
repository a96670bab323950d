#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutual-exclusion lock over a `pthread_mutex_t`.
///
/// `Synchronization.Mutex` makes ThreadSanitizer report false races on Linux with this toolchain;
/// a pthread mutex is understood by TSan, so every lock in the library is one of these.
/// Every pthread return code is checked.
final class Lock: @unchecked Sendable {
    // @unchecked Sendable: the mutex is only touched through pthread calls, which are
    // thread-safe by contract; the pointer itself never changes after `init`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        Lock.initialize(mutex)
    }

    deinit {
        Lock.destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always)
    func lock() { Lock.lock(mutex) }

    @inline(__always)
    func unlock() { Lock.unlock(mutex) }

    /// Runs `body` with the lock held. `body` must not call user code.
    @inline(__always)
    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }

    // MARK: Raw mutex helpers shared with `LockTable`.

    static func initialize(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        var attributes = pthread_mutexattr_t()
        precondition(pthread_mutexattr_init(&attributes) == 0, "pthread_mutexattr_init failed")
        #if DEBUG
        precondition(
            pthread_mutexattr_settype(&attributes, .init(PTHREAD_MUTEX_ERRORCHECK)) == 0,
            "pthread_mutexattr_settype failed")
        #elseif os(Linux)
        // PTHREAD_MUTEX_ADAPTIVE_NP (glibc): spins briefly before sleeping, which suits the short
        // critical sections here (a state transition) better than sleeping at once.
        _ = pthread_mutexattr_settype(&attributes, 3)
        #endif
        precondition(pthread_mutex_init(mutex, &attributes) == 0, "pthread_mutex_init failed")
        pthread_mutexattr_destroy(&attributes)
    }

    static func destroy(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        precondition(pthread_mutex_destroy(mutex) == 0, "pthread_mutex_destroy failed: the lock is still held")
    }

    @inline(__always)
    static func lock(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        let code = pthread_mutex_lock(mutex)
        precondition(code == 0, "pthread_mutex_lock failed with \(code)")
    }

    @inline(__always)
    static func unlock(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        let code = pthread_mutex_unlock(mutex)
        precondition(code == 0, "pthread_mutex_unlock failed with \(code)")
    }
}

// A note on `@exclusivity(unchecked)`: the library's state lives in stored properties of classes
// (an operation's state machine, a queue's scheduler, the pool's job list), each read and written
// only with its lock held. The lock serializes accesses from different threads, but it does not
// stop one thread from overlapping two accesses of its own: a transition that holds the state
// `inout` and reaches it again through the object (to record a change, say) is exactly what the
// dynamic exclusivity check catches. The checks cost as much as the lock itself on the hot path,
// so the hottest properties are `@exclusivity(unchecked)` in normal builds, and checked in the
// checked build (`-D OPERATIONS_INTERNAL_CHECKS`), which CI runs the whole suite with. State off
// the hot path keeps its checks in every build. Code that runs with a state `inout` reaches it
// only through that argument.
