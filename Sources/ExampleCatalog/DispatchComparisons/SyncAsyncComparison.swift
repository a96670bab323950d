import Dispatch
import Operations

/// `DispatchQueue.sync` / `async` next to ``OpQueue/addOperations(_:waitUntilFinished:)`` with
/// `true` / `addOperation(_:)`: whether the caller waits for the work or goes on at
/// once.
///
/// What the operation form adds: the caller may decide to wait *after* adding work
/// (``Op/waitUntilFinished()-2def2`` on one operation, or the queue's
/// ``OpQueue/waitUntilAllOperationsAreFinished()-2ptgv``), a wait that could never return (such
/// as an operation of a width-1 queue waiting for its own queue) traps with an explanation instead
/// of deadlocking as `sync` on the current serial queue does,
/// and `async` code gets waits that suspend instead of blocking. What GCD keeps: `sync` runs the
/// block on the calling thread and returns its value directly, with no object in between.
enum SyncAsyncComparison {
    /// The example: `swift run examples gcd-sync-async`.
    static let example = Example(
        name: "gcd-sync-async",
        title: "sync / async vs waiting or not for added operations",
        source: "GCD: DispatchQueue.sync / async",
        expected: [
            "GCD async: after async, block",
            "GCD sync: block, after sync",
            "GCD serial queue: 1 11 111 1111 3 4",
            "OpQueue addOperation: after addOperation, operation",
            "OpQueue addOperations(_:waitUntilFinished: true): operation, after addOperations",
            "OpQueue width 1: 1 11 111 1111 3 4",
        ]
    ) { output in
        // GCD. `async` returns at once; the queue is suspended only so that the block cannot
        // run before the next line, which makes the printed order the same on every run.
        let serial = DispatchQueue(label: "gcd-sync-async.serial")
        let gcdAsync = Recorder<String>()
        serial.suspend()
        serial.async { gcdAsync.append("block") }
        gcdAsync.append("after async")
        serial.resume()
        serial.sync {}
        output.line("GCD async: \(gcdAsync.all.joined(separator: ", "))")

        // `sync` returns only after the block has run.
        let gcdSync = Recorder<String>()
        serial.sync { gcdSync.append("block") }
        gcdSync.append("after sync")
        output.line("GCD sync: \(gcdSync.all.joined(separator: ", "))")

        // The classic puzzle: four `async` blocks, then a `sync` one. The serial queue runs
        // them in order, and "4" comes after the `sync` returns. (The puzzle also logs "2" right
        // after the `async` calls; where it lands among the blocks varies from run to run, so
        // it is left out here.)
        let puzzle = Recorder<String>()
        for label in ["1", "11", "111", "1111"] {
            serial.async { puzzle.append(label) }
        }
        serial.sync { puzzle.append("3") }
        puzzle.append("4")
        output.line("GCD serial queue: \(puzzle.all.joined(separator: " "))")

        // Operations. `addOperation` returns at once, like `async` (suspended for the same
        // reason as above).
        let queue = OpQueue()
        queue.name = "gcd-sync-async"
        let opAsync = Recorder<String>()
        queue.isSuspended = true
        queue.addOperation { opAsync.append("operation") }
        opAsync.append("after addOperation")
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        output.line("OpQueue addOperation: \(opAsync.all.joined(separator: ", "))")

        // Waiting, like `sync`: the operation runs on a worker thread while this one blocks.
        let opSync = Recorder<String>()
        queue.addOperations([BlockOp { opSync.append("operation") }], waitUntilFinished: true)
        opSync.append("after addOperations")
        output.line("OpQueue addOperations(_:waitUntilFinished: true): \(opSync.all.joined(separator: ", "))")

        // The puzzle on a queue of width 1: equal priorities start in the order they were added.
        queue.maxConcurrentOperationCount = 1
        let opPuzzle = Recorder<String>()
        for label in ["1", "11", "111", "1111"] {
            queue.addOperation { opPuzzle.append(label) }
        }
        queue.addOperations([BlockOp { opPuzzle.append("3") }], waitUntilFinished: true)
        opPuzzle.append("4")
        output.line("OpQueue width 1: \(opPuzzle.all.joined(separator: " "))")
    }
}
