import Dispatch
import Operations

/// A concurrent `DispatchQueue` next to an ``OpQueue`` with the default width: both run the jobs
/// side by side, in no particular order.
///
/// What the operation queue adds: a width (``OpQueue/maxConcurrentOperationCount``) instead of
/// as many as the pool allows; dependencies, so a job can run after others without a group or a
/// barrier; cancellation of jobs that have not started (one by one, or all with
/// ``OpQueue/cancelAllOperations()``), and of running ones that check ``Op/isCancelled``; and a
/// wait for the queue itself. GCD has some of this piecemeal (`DispatchWorkItem.cancel()` for one
/// item not yet started, `notify` for one item after another), no width, and no way to reach the
/// work already submitted to a queue. What GCD keeps: a block is far cheaper than an operation,
/// which matters for many tiny jobs.
enum ConcurrentQueueComparison {
    /// The example: `swift run examples gcd-concurrent-queue`.
    static let example = Example(
        name: "gcd-concurrent-queue",
        title: "A concurrent DispatchQueue vs a default OpQueue",
        source: "GCD: concurrent DispatchQueue",
        expected: [
            "GCD concurrent queue: squares 1 4 9 16",
            "OpQueue: squares 1 4 9 16",
            "OpQueue width 2: the sum ran after its 4 dependencies: 30",
            "OpQueue width 2: never more than 2 jobs at once",
            "OpQueue: job 3 was cancelled before it started and never ran: squares 1 4 16",
        ]
    ) { output in
        // GCD: the blocks run concurrently and finish in any order (sorted before printing).
        // A barrier block submitted with `sync` waits for the blocks before it.
        let concurrent = DispatchQueue(label: "gcd-concurrent-queue.concurrent", attributes: .concurrent)
        let gcdSquares = Recorder<Int>()
        for job in 1...4 {
            concurrent.async { gcdSquares.append(job * job) }
        }
        concurrent.sync(flags: .barrier) {}
        output.line("GCD concurrent queue: squares \(sorted(gcdSquares))")

        // Operations: the same, and the queue is waited for directly.
        let queue = OpQueue()
        queue.name = "gcd-concurrent-queue"
        let opSquares = Recorder<Int>()
        for job in 1...4 {
            queue.addOperation { opSquares.append(job * job) }
        }
        queue.waitUntilAllOperationsAreFinished()
        output.line("OpQueue: squares \(sorted(opSquares))")

        // A width, and a job that depends on the others: the sum starts only once every square
        // is in, without a group or a barrier. A gauge counts each square job as running while
        // it records its square, so that jobs running at the same time are seen overlapping.
        queue.maxConcurrentOperationCount = 2
        let widthSquares = Recorder<Int>()
        let gauge = ConcurrencyGauge()
        let squareJobs = (1...4).map { job in BlockOp { gauge.measure { widthSquares.append(job * job) } } }
        let sum = Recorder<Int>()
        let total = BlockOp { sum.append(widthSquares.all.reduce(0, +)) }
        for job in squareJobs {
            total.addDependency(job)
        }
        queue.addOperations(squareJobs + [total], waitUntilFinished: true)
        output.line("OpQueue width 2: the sum ran after its \(total.dependencies.count) dependencies: \(sum.all.reduce(0, +))")
        // Whether two of them did overlap depends on timing; that no more than two did does not.
        if gauge.peak <= queue.maxConcurrentOperationCount {
            output.line("OpQueue width 2: never more than \(queue.maxConcurrentOperationCount) jobs at once")
        } else {
            output.line("OpQueue width 2: \(gauge.peak) jobs at once")
        }

        // Cancelling a job that has not started: it finishes without running. (The queue is
        // suspended so that job 3 cannot have started before it is cancelled.)
        queue.maxConcurrentOperationCount = OpQueue.defaultMaxConcurrentOperationCount
        let cancelSquares = Recorder<Int>()
        let jobs = (1...4).map { job in BlockOp { cancelSquares.append(job * job) } }
        queue.isSuspended = true
        queue.addOperations(jobs, waitUntilFinished: false)
        jobs[2].cancel()
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        output.line("OpQueue: job 3 was cancelled before it started and never ran: squares \(sorted(cancelSquares))")
    }

    /// The values in `squares`, smallest first, separated by spaces (the jobs record them in any
    /// order).
    private static func sorted(_ squares: Recorder<Int>) -> String {
        squares.all.sorted().map(String.init).joined(separator: " ")
    }
}
