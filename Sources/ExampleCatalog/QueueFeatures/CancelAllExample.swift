import Dispatch
import Operations

/// `cancelAllOperations()` on a queue that holds a running operation, operations waiting for a
/// free slot and one waiting for a dependency: the pending ones finish without running `main`,
/// and the running one notices `isCancelled` and stops early.
///
/// The guide's section *Canceling Operations* says that cancelling is the only way to take an
/// operation out of a queue, that a cancelled operation still counts as finished (so operations
/// that depend on it are released), and that cancelling every queued operation at once, when the
/// application quits or the user asks for it, is more common than cancelling them one by one.
enum CancelAllExample {
    static let example = Example(
        name: "cancelling-everything",
        title: "Cancelling every operation of a queue",
        source: "Guide: Canceling Operations; NSOperationQueue reference",
        expected: [
            "export: started",
            "operationCount before cancelling: 6 (1 executing, 4 waiting for the slot, 1 waiting for a dependency)",
            "export: saw isCancelled, stopping early",
            "pending operations whose main ran: 0 of 5",
            "cancelled: 6 of 6, finished: 6 of 6",
            "operationCount after the wait: 0",
        ]
    ) { output in
        let queue = OpQueue()
        queue.name = "exports"
        queue.maxConcurrentOperationCount = 1
        let started = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let counter = Counter()

        // The running operation holds the queue's only slot until the example lets it go on.
        // Cancelling does not stop running code: the body checks isCancelled and returns early.
        let export = BlockOp {
            output.line("export: started")
            started.signal()
            proceed.wait()
            if Op.current?.isCancelled == true {
                output.line("export: saw isCancelled, stopping early")
                return
            }
            output.line("export: finished every page")
        }
        export.name = "export"
        queue.addOperation(export)
        started.wait()

        // Four operations wait for the slot; a fifth waits for a dependency that never finishes
        // (an operation in no queue that nobody starts).
        let waitingForSlot = (1...4).map { number in
            let operation = BlockOp { counter.increment() }
            operation.name = "page \(number)"
            return operation
        }
        let neverStarted = BlockOp {}
        let waitingForDependency = BlockOp { counter.increment() }
        waitingForDependency.name = "index"
        waitingForDependency.addDependency(neverStarted)
        queue.addOperations(waitingForSlot + [waitingForDependency], waitUntilFinished: false)
        output.line("operationCount before cancelling: \(queue.operationCount) (1 executing, 4 waiting for the slot, 1 waiting for a dependency)")

        // Every operation in the queue is cancelled. The pending ones become ready (cancellation
        // overrides dependencies) and, when the queue starts them, finish at once without running
        // their main.
        queue.cancelAllOperations()
        proceed.signal()
        queue.waitUntilAllOperationsAreFinished()

        let all = [export] + waitingForSlot + [waitingForDependency]
        output.line("pending operations whose main ran: \(counter.count) of \(all.count - 1)")
        output.line("cancelled: \(all.filter(\.isCancelled).count) of \(all.count), finished: \(all.filter(\.isFinished).count) of \(all.count)")
        output.line("operationCount after the wait: \(queue.operationCount)")
    }
}
