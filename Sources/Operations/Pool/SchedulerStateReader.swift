#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads one thread's scheduler state.
enum SchedulerStateReader {
    /// `/proc/self/task/<tid>/stat` (Linux).
    case proc(path: [CChar])
    #if canImport(Darwin)
    /// The thread's Mach port (Apple platforms).
    case mach(thread_act_t)
    #endif
    /// Nothing to read: every state is unknown.
    case unavailable

    /// Whether thread states may be read at all: `OPERATIONS_SCHEDULER_STATE=unavailable` in the
    /// environment makes the pool behave as where they cannot be (to test that path anywhere).
    static let isAllowed: Bool = {
        guard let value = getenv("OPERATIONS_SCHEDULER_STATE") else { return true }
        return String(cString: value) != "unavailable"
    }()

    /// The reader for the calling thread.
    static func forCurrentThread() -> SchedulerStateReader {
        guard isAllowed else { return .unavailable }
        #if os(Linux)
        var buffer = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        guard length > 0 else { return .unavailable }
        let link = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let reader = SchedulerStateReader.proc(path: Array("/proc/\(link)/stat".utf8CString))
        return reader.currentState() == .unknown ? .unavailable : reader
        #elseif canImport(Darwin)
        return .mach(pthread_mach_thread_np(pthread_self()))
        #else
        return .unavailable
        #endif
    }

    /// The state now.
    func currentState() -> Worker.SchedulerState {
        switch self {
        case .proc(let path):
            return Self.readProc(path)
        #if canImport(Darwin)
        case .mach(let thread):
            return Self.readMach(thread)
        #endif
        case .unavailable:
            return .unknown
        }
    }

    private static func readProc(_ path: [CChar]) -> Worker.SchedulerState {
        let descriptor = open(path, O_RDONLY)
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

    #if canImport(Darwin)
    private static func readMach(_ thread: thread_act_t) -> Worker.SchedulerState {
        var info = thread_basic_info()
        var count = mach_msg_type_number_t(MemoryLayout<thread_basic_info_data_t>.size / MemoryLayout<integer_t>.size)
        let result = withUnsafeMutablePointer(to: &info) { pointer in
            pointer.withMemoryRebound(to: integer_t.self, capacity: Int(count)) { raw in
                thread_info(thread, thread_flavor_t(THREAD_BASIC_INFO), raw, &count)
            }
        }
        guard result == KERN_SUCCESS else { return .unknown }
        switch info.run_state {
        case TH_STATE_RUNNING: return .runnable
        case TH_STATE_WAITING, TH_STATE_UNINTERRUPTIBLE: return .blocked
        default: return .unknown
        }
    }
    #endif
}
