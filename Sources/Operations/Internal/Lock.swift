import OperationsRuntimeShims

/// A mutual-exclusion lock: the library's own (`operations_lock`, in the C shim), a futex word on
/// Linux and a pthread mutex elsewhere.
///
/// On Linux, taking and giving back a free lock is a call and one atomic instruction each, where
/// a glibc mutex also goes through the C library's PLT and dispatches on the mutex's kind; the
/// critical sections here are short state transitions, which is what it is made for (see the
/// shim's header). `Synchronization.Mutex` makes ThreadSanitizer report false races on Linux with
/// this toolchain; this lock's atomics are compiled with the sanitizer, which sees the ordering
/// they give.
///
/// Debug builds check every use: a lock taken twice by one thread, or given back by a thread that
/// does not hold it, traps with a message instead of deadlocking.
final class Lock: @unchecked Sendable {
    // @unchecked Sendable: the lock is only touched through the shim's functions, which are
    // thread-safe by contract; the pointer itself never changes after `init`.
    private let raw: UnsafeMutablePointer<operations_lock>

    init() {
        raw = .allocate(capacity: 1)
        operations_lock_init(raw)
    }

    deinit {
        Lock.destroy(raw)
        raw.deallocate()
    }

    @inline(__always)
    func lock() { Lock.lock(raw) }

    @inline(__always)
    func unlock() { Lock.unlock(raw) }

    /// Runs `body` with the lock held. `body` must not call user code.
    @inline(__always)
    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }

    // MARK: Raw lock helpers shared with `LockTable`.

    static func destroy(_ lock: UnsafeMutablePointer<operations_lock>) {
        precondition(operations_lock_destroy(lock) == 0, "Internal inconsistency: a lock was destroyed while held")
    }

    @inline(__always)
    static func lock(_ lock: UnsafeMutablePointer<operations_lock>) {
        let code = operations_lock_lock(lock)
        precondition(code == 0, "Internal inconsistency: a thread took a lock it holds already (error \(code))")
    }

    @inline(__always)
    static func unlock(_ lock: UnsafeMutablePointer<operations_lock>) {
        let code = operations_lock_unlock(lock)
        precondition(code == 0, "Internal inconsistency: a thread gave back a lock it does not hold (error \(code))")
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
