#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The side of a measurement that runs workloads: a child process of the checks, so that a
/// workload that traps or hangs takes only its own row down, and each row starts with a fresh
/// heap. It prints what it measured, one line each, for the parent to read:
///
///     n 65536                  the N it chose (a growth check without a given N)
///     a 0.1234 0.2013 5678     a sample of the first arm: wall-clock seconds, CPU seconds,
///                              heap gained over the run's second half in bytes (or -)
///     b 0.2469 0.4107 5702     a sample of the second arm
enum Child {
    /// The CPU time the smallest N must take at least: long enough that the clock's resolution, the
    /// start of threads and one-off costs do not matter, short enough for the budget.
    static let targetSeconds = 0.1

    /// A child stops sampling once it has spent this long and has one sample of each arm.
    static let budgetSeconds = 6.0

    /// `growth NAME [N] REPETITIONS`: chooses N (from `check.smallest`, doubling until a run
    /// takes ``targetSeconds``, at most `check.largest`) unless it is given, then samples N and 2N.
    static func growth(_ check: GrowthCheck, n given: Int?, repetitions: Int) {
        var n = given ?? check.smallest
        if given == nil {
            // Doubling: a run at most four times as long as the last (a quadratic structure), so
            // the search costs about as much as one run at the N it finds.
            while check.workload(n).cpuSeconds < targetSeconds, n * 2 <= check.largest {
                n *= 2
                settle()
            }
            report("n \(n)")
        } else {
            warmUp(check.workload, n)
        }
        sample(check.workload, n, check.workload, 2 * n, repetitions: repetitions)
    }

    /// `pair A NA B NB REPETITIONS`: samples workload A at NA and B at NB, in turn.
    static func pair(_ a: Arm, _ b: Arm, repetitions: Int) {
        guard let first = Catalog.workload(named: a.workload), let second = Catalog.workload(named: b.workload) else {
            report("unknown workload")
            exit(2)
        }
        warmUp(first, a.n)
        sample(first, a.n, second, b.n, repetitions: repetitions)
    }

    /// One run at a quarter of the size, not counted: the worker threads start, the code and
    /// the heap are warm, and a quadratic workload costs a sixteenth of a sample.
    private static func warmUp(_ workload: (Int) -> Sample, _ n: Int) {
        _ = workload(max(1, n / 4))
    }

    /// Samples the two arms in turn (A B B A A B ..., so that a drift of the machine's load
    /// weighs on both alike), `repetitions` times each or until the budget is spent.
    private static func sample(_ a: (Int) -> Sample, _ na: Int, _ b: (Int) -> Sample, _ nb: Int, repetitions: Int) {
        let clock = Stopwatch()
        for repetition in 0..<repetitions {
            if repetition > 0, clock.seconds > budgetSeconds { break }
            if repetition % 2 == 0 {
                run("a", a, na)
                run("b", b, nb)
            } else {
                run("b", b, nb)
                run("a", a, na)
            }
        }
    }

    private static func run(_ label: String, _ workload: (Int) -> Sample, _ n: Int) {
        settle()
        let sample = workload(n)
        report("\(label) \(sample.seconds) \(sample.cpuSeconds) \(sample.keptBytes.map(String.init) ?? "-")")
    }

    /// Waits until the process is idle (its threads took less than a tenth of a core over 10 ms,
    /// or 2 s have passed): what the last run left to do (releasing its operations, a group's
    /// children) must not be measured with the next.
    ///
    /// First it lets ``stallCheckWait`` pass: a queue whose members all wait for an operation
    /// elsewhere is checked 50 ms after it stalled (`OpQueue.stallCheckDelay`), and the checks of
    /// the last run's queues, which keep those queues alive until then, would otherwise fire in
    /// the next run, idle as the process looks meanwhile.
    private static func settle() {
        usleep(stallCheckWait)
        let deadline = Stopwatch()
        while deadline.seconds < 2 {
            let window = Stopwatch()
            usleep(10_000)
            if window.cpuSeconds < 0.001 { return }
        }
    }

    /// Microseconds: the library's stall-check delay (50 ms), and a margin.
    private static let stallCheckWait: UInt32 = 60_000

    private static func report(_ line: String) {
        print(line)
        fflush(nil)
    }
}
