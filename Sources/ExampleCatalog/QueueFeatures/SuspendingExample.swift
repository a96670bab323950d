import Dispatch
import Operations

/// Suspending a queue with `isSuspended = true`: the operation already running goes on, the
/// queued ones do not start (they still count in `operationCount`), and resuming lets them run.
///
/// The guide's section *Suspending and Resuming Queues* explains that suspending a queue does
/// not pause operations in the middle of their work: it only keeps new ones from being scheduled,
/// for instance while the user has paused some work they may want to resume later.
enum SuspendingExample {
    static let example = Example(
        name: "suspending-a-queue",
        title: "Suspending and resuming a queue",
        source: "Guide: Suspending and Resuming Queues",
        expected: [
            "import: started",
            "queue suspended while import runs: isSuspended = true",
            "operationCount: 4 (1 executing, 3 held back)",
            "import: finished",
            "the running operation finished although the queue is suspended: true",
            "operationCount: 3, held-back operations run so far: 0",
            "resumed: isSuspended = false",
            "held-back operations run after resuming: 3, operationCount: 0",
        ]
    ) { output in
        let queue = OpQueue()
        queue.name = "imports"
        let started = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let counter = Counter()

        // An operation that is running when the queue is suspended, held at a gate so that the
        // example knows it is running.
        let running = BlockOp {
            output.line("import: started")
            started.signal()
            proceed.wait()
            output.line("import: finished")
        }
        running.name = "import"
        queue.addOperation(running)
        started.wait()

        queue.isSuspended = true
        output.line("queue suspended while import runs: isSuspended = \(queue.isSuspended)")

        // Operations can still be added to a suspended queue; they wait there, ready.
        let heldBack = (1...3).map { number in
            let operation = BlockOp { counter.increment() }
            operation.name = "index \(number)"
            return operation
        }
        queue.addOperations(heldBack, waitUntilFinished: false)
        let executing = queue.operations.filter(\.isExecuting).count
        output.line("operationCount: \(queue.operationCount) (\(executing) executing, \(queue.operationCount - executing) held back)")

        // Suspension does not interrupt running work.
        proceed.signal()
        running.waitUntilFinished()
        output.line("the running operation finished although the queue is suspended: \(running.isFinished)")
        output.line("operationCount: \(queue.operationCount), held-back operations run so far: \(counter.count)")

        queue.isSuspended = false
        output.line("resumed: isSuspended = \(queue.isSuspended)")
        queue.waitUntilAllOperationsAreFinished()
        output.line("held-back operations run after resuming: \(counter.count), operationCount: \(queue.operationCount)")
    }
}
