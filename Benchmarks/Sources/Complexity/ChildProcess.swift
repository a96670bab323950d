import Foundation

/// Runs this program as a child (``Child``) and reads what it measured.
enum ChildProcess {
    /// What a child reported, or how it failed.
    enum Outcome {
        case measured(Measured)
        /// It trapped, exited with an error, or hung (the text says which).
        case failed(String)
    }

    /// A child that runs longer than this is stopped and its row fails: it hangs.
    static let timeoutSeconds = 180.0

    /// Runs `complexity --child arguments...` and parses its lines (see ``Child``).
    static func run(_ arguments: [String]) -> Outcome {
        let process = Process()
        process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--child"] + arguments
        let output = Pipe()
        process.standardOutput = output
        // A trap in a release build prints no message, only the backtrace that says where it
        // was: the crashed thread's, short (every thread's and the registers if SWIFT_BACKTRACE
        // says so).
        var environment = ProcessInfo.processInfo.environment
        if environment["SWIFT_BACKTRACE"] == nil {
            environment["SWIFT_BACKTRACE"] = "interactive=no,threads=crashed,registers=none,images=none,limit=16,top=4"
        }
        process.environment = environment
        // The child's standard error is ours: a trap's message shows in the log.
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        do {
            try process.run()
        } catch {
            return .failed("could not start: \(error)")
        }
        // The child writes a few dozen short lines, far less than a pipe holds, so it never
        // blocks on the pipe before it exits.
        if exited.wait(timeout: .now() + timeoutSeconds) == .timedOut {
            process.terminate()
            exited.wait()
            return .failed("HANG (stopped after \(Int(timeoutSeconds)) s)")
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        if process.terminationReason == .uncaughtSignal {
            return .failed("CRASH (signal \(process.terminationStatus))")
        }
        if process.terminationStatus != 0 {
            return .failed("EXIT \(process.terminationStatus)")
        }
        var measured = Measured()
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            switch fields.first {
            case "n":
                measured.n = Int(fields[1])
            case "a", "b":
                guard fields.count == 4, let seconds = Double(fields[1]), let cpuSeconds = Double(fields[2]) else { continue }
                let sample = Sample(seconds: seconds, cpuSeconds: cpuSeconds, keptBytes: Int(fields[3]))
                if fields[0] == "a" { measured.a.append(sample) } else { measured.b.append(sample) }
            default:
                continue
            }
        }
        guard !measured.a.isEmpty, !measured.b.isEmpty else {
            return .failed("no samples")
        }
        return .measured(measured)
    }
}

/// The samples of two arms (N and 2N, or a workload and its baseline), from one or more children.
struct Measured {
    /// The N a growth check's child chose.
    var n: Int?
    var a: [Sample] = []
    var b: [Sample] = []

    /// The least CPU time of each arm's runs: the one least disturbed by the machine's other
    /// load.
    var fastestA: Double { a.map(\.cpuSeconds).min()! }
    var fastestB: Double { b.map(\.cpuSeconds).min()! }

    /// The least wall-clock time of each arm's runs.
    var fastestWallA: Double { a.map(\.seconds).min()! }
    var fastestWallB: Double { b.map(\.seconds).min()! }

    /// B over A by each clock.
    var ratioOfB: Ratio {
        Ratio(cpu: fastestB / fastestA, wall: fastestWallB / fastestWallA)
    }

    /// A over B by each clock.
    var ratioOfA: Ratio {
        Ratio(cpu: fastestA / fastestB, wall: fastestWallA / fastestWallB)
    }

    /// The median of the heap each arm's runs gained over their second half: what grows with N,
    /// every run gains; the operations in flight at the marks, and a buffer that happened to be
    /// growing at one of them, differ from run to run.
    var keptA: Int? { Measured.median(a.compactMap(\.keptBytes)) }
    var keptB: Int? { Measured.median(b.compactMap(\.keptBytes)) }

    private static func median(_ values: [Int]) -> Int? {
        values.isEmpty ? nil : values.sorted()[values.count / 2]
    }

    /// The samples of both, for a re-measured row.
    mutating func merge(_ other: Measured) {
        a += other.a
        b += other.b
    }
}

/// A ratio of times by both clocks (see ``Verdicts`` for how it is judged).
struct Ratio {
    var cpu: Double
    var wall: Double
}
