import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One pool thread's record: how to wake it, and how to tell whether it is blocked.
final class Worker: @unchecked Sendable {
    // @unchecked Sendable: `isRetired` is written and read only by the worker's own thread;
    // the other members are immutable or thread-safe.

    /// Signalled once for each job handed to this worker while it was idle.
    let wakeup = DispatchSemaphore(value: 0)

    /// Set by the worker's own thread when it leaves the pool.
    var isRetired = false

    /// How many jobs the worker has taken. The monitor counts a sleeping worker as blocked only if
    /// this did not change since its last look (a worker between two jobs may sleep on a lock for
    /// a moment). Relaxed: a progress hint only.
    let jobsTaken = Atomic<UInt64>(0)

    /// `/proc/self/task/<tid>/stat`, which tells the thread's scheduler state (Linux).
    private let statPath: [CChar]?

    /// Must be created on the worker's own thread.
    init() {
        #if os(Linux)
        var buffer = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        if length > 0 {
            let link = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            statPath = Array("/proc/\(link)/stat".utf8CString)
        } else {
            statPath = nil
        }
        #else
        statPath = nil
        #endif
    }

    /// What the scheduler says the thread is doing.
    enum SchedulerState {
        /// Running or waiting for a core: it is doing CPU work.
        case runnable
        /// Sleeping or waiting on I/O: it is blocked.
        case blocked
        /// The state could not be read.
        case unknown
    }

    /// The thread's scheduler state, read from `/proc` (Linux); `.unknown` elsewhere.
    var schedulerState: SchedulerState {
        guard let statPath else { return .unknown }
        let descriptor = open(statPath, O_RDONLY)
        guard descriptor >= 0 else { return .unknown }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 256)
        let count = read(descriptor, &bytes, bytes.count)
        guard count > 0 else { return .unknown }
        // "tid (name) S ...": the state follows the last ")" (the name may contain any character).
        guard let close = bytes[..<count].lastIndex(of: UInt8(ascii: ")")), close + 2 < count else { return .unknown }
        switch bytes[close + 2] {
        case UInt8(ascii: "R"): return .runnable
        case UInt8(ascii: "S"), UInt8(ascii: "D"): return .blocked
        default: return .unknown
        }
    }
}
