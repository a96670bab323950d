import Dispatch
import Operations

/// A serial `DispatchQueue` next to an ``OpQueue`` whose ``OpQueue/maxConcurrentOperationCount``
/// is 1: both run one job at a time, in the order they were added.
///
/// What the operation queue adds: the order is a matter of priority among ready operations
/// (``Op/queuePriority``), so urgent work can overtake a backlog, and dependencies, cancellation
/// and a width that can be raised later all still apply. What GCD keeps: a serial queue is
/// strictly first in, first out whatever happens, and a block costs far less than an operation
/// object; for plain mutual exclusion it is the cheaper tool.
enum SerialQueueComparison {
    /// The example: `swift run examples gcd-serial-queue`.
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
        // submitted before it has run. A gauge counts each job as running while it records
        // itself, so that jobs running at the same time would be seen overlapping.
        let serial = DispatchQueue(label: "gcd-serial-queue.serial")
        let gcdJobs = Recorder<String>()
        let gcdGauge = ConcurrencyGauge()
        for job in 1...4 {
            serial.async { gcdGauge.measure { gcdJobs.append("\(job)") } }
        }
        serial.sync {}
        output.line("GCD serial queue: \(gcdJobs.all.joined(separator: " "))")
        output.line("GCD serial queue: never more than \(gcdGauge.peak) job at once")

        // Operations: the same with a width of 1, and a wait that needs no dummy block.
        let queue = OpQueue()
        queue.name = "gcd-serial-queue.width-1"
        queue.maxConcurrentOperationCount = 1
        let opJobs = Recorder<String>()
        let opGauge = ConcurrencyGauge()
        for job in 1...4 {
            queue.addOperation { opGauge.measure { opJobs.append("\(job)") } }
        }
        queue.waitUntilAllOperationsAreFinished()
        output.line("OpQueue width 1: \(opJobs.all.joined(separator: " "))")
        output.line("OpQueue width 1: never more than \(opGauge.peak) job at once")

        // What GCD cannot do: an urgent job added after a backlog goes first. (The queue is
        // suspended while the jobs are added only so that none starts before the urgent one is
        // in: the order printed is then the same on every run.)
        let urgentJobs = Recorder<String>()
        queue.isSuspended = true
        for job in 1...4 {
            queue.addOperation { urgentJobs.append("\(job)") }
        }
        let urgent = BlockOp { urgentJobs.append("urgent") }
        urgent.queuePriority = .veryHigh
        queue.addOperation(urgent)
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        output.line("OpQueue width 1, urgent job added last: \(urgentJobs.all.joined(separator: " "))")
    }
}
