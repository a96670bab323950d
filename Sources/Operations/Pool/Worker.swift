import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One pool thread's record: how to wake it, and how to read its CPU clock.
final class Worker: @unchecked Sendable {
    // @unchecked Sendable: `isRetired` is written and read only by the worker's own thread;
    // the other members are immutable or thread-safe.

    /// Signalled once for each job handed to this worker while it was idle.
    let wakeup = DispatchSemaphore(value: 0)

    /// Set by the worker's own thread when it leaves the pool.
    var isRetired = false

    #if os(Linux)
    private let clock: clockid_t?
    #endif

    /// Must be created on the worker's own thread.
    init() {
        #if os(Linux)
        var clock = clockid_t()
        self.clock = pthread_getcpuclockid(pthread_self(), &clock) == 0 ? clock : nil
        #endif
    }

    /// CPU time the thread has used, in nanoseconds; 0 where per-thread clocks are unavailable.
    var cpuTime: Int64 {
        #if os(Linux)
        var time = timespec()
        guard let clock, clock_gettime(clock, &time) == 0 else { return 0 }
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
        #else
        return 0
        #endif
    }
}
