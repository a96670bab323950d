import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wall-clock time and the process's CPU time (every thread's) since it was made.
struct Stopwatch {
    private let wallStart = DispatchTime.now().uptimeNanoseconds
    private let cpuStart = Stopwatch.cpuNanoseconds

    /// Wall-clock seconds.
    var seconds: Double {
        Double(DispatchTime.now().uptimeNanoseconds - wallStart) / 1e9
    }

    /// CPU seconds of every thread of the process.
    var cpuSeconds: Double {
        Double(Stopwatch.cpuNanoseconds - cpuStart) / 1e9
    }

    /// A sample of the time since the stopwatch was made.
    var sample: Sample {
        Sample(seconds: seconds, cpuSeconds: cpuSeconds)
    }

    private static var cpuNanoseconds: UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
