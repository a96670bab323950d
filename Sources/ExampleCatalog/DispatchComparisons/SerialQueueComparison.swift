import Dispatch
import Operations
import Synchronization

/// A serial `DispatchQueue` next to an ``OpQueue`` whose ``OpQueue/maxConcurrentOperationCount``
/// is 1: both run one job at a time, in the order they were added.
///
/// What the operation queue adds: the order is a matter of priority among ready operations
/// (``Op/queuePriority``), so urgent work can overtake a backlog, and dependencies, cancellation
/// and a width that can be raised later all still apply. What GCD keeps: a serial queue is
/// strictly first in, first out whatever happens, and a block costs far less than an operation
/// object; for plain mutual exclusion it is the cheaper tool.
enum SerialQueueComparison {
    static let example = Example(
        name: "gcd-serial-queue",
        title: "A serial DispatchQueue vs an OpQueue of width 1",
        source: "GCD: serial DispatchQueue",
        expected: [
            "GCD serial queue: 1 2 3 4",
            "GCD serial queue: never more than 1 job at once",
            "OpQueue width 1: 1 2 3 4",
            "OpQueue width 1: never more than 1 job at once",
            "OpQueue width 1, urgent job added last: urgent 1 2 3 4",
        ]
    ) { output in
        // GCD: a queue made without `.concurrent` is serial. `sync {}` returns once every block
        // submitted before it has run.
        let serial = DispatchQueue(label: "gcd-serial-queue.serial")
        let gcdLog = Log()
        for job in 1...4 {
            serial.async { gcdLog.run("\(job)") }
        }
        serial.sync {}
        output.line("GCD serial queue: \(gcdLog.entries.joined(separator: " "))")
        output.line("GCD serial queue: never more than \(gcdLog.peak) job at once")

        // Operations: the same with a width of 1, and a wait that needs no dummy block.
        let queue = OpQueue()
        queue.name = "gcd-serial-queue.width-1"
        queue.maxConcurrentOperationCount = 1
        let opLog = Log()
        for job in 1...4 {
            queue.addOperation { opLog.run("\(job)") }
        }
        queue.waitUntilAllOperationsAreFinished()
        output.line("OpQueue width 1: \(opLog.entries.joined(separator: " "))")
        output.line("OpQueue width 1: never more than \(opLog.peak) job at once")

        // What GCD cannot do: an urgent job added after a backlog goes first. (The queue is
        // suspended while the jobs are added only so that none starts before the urgent one is
        // in: the order printed is then the same on every run.)
        let urgentLog = Log()
        queue.isSuspended = true
        for job in 1...4 {
            queue.addOperation { urgentLog.run("\(job)") }
        }
        let urgent = BlockOp { urgentLog.run("urgent") }
        urgent.queuePriority = .veryHigh
        queue.addOperation(urgent)
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        output.line("OpQueue width 1, urgent job added last: \(urgentLog.entries.joined(separator: " "))")
    }

    /// Records the jobs in the order they ran, and the most that ran at once.
    final class Log: Sendable {
        private struct State {
            var entries: [String] = []
            var running = 0
            var peak = 0
        }

        private let state = Mutex(State())

        /// Runs a job called `name`: it enters, records itself, and leaves, each step on its own,
        /// so that jobs running at the same time would be seen overlapping.
        func run(_ name: String) {
            state.withLock { state in
                state.running += 1
                state.peak = max(state.peak, state.running)
            }
            state.withLock { $0.entries.append(name) }
            state.withLock { $0.running -= 1 }
        }

        var entries: [String] { state.withLock { $0.entries } }
        var peak: Int { state.withLock { $0.peak } }
    }
}
