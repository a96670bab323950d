import Dispatch
import Operations
import Synchronization

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
        let gcdAsync = Log()
        serial.suspend()
        serial.async { gcdAsync.add("block") }
        gcdAsync.add("after async")
        serial.resume()
        serial.sync {}
        output.line("GCD async: \(gcdAsync.joined(", "))")

        // `sync` returns only after the block has run.
        let gcdSync = Log()
        serial.sync { gcdSync.add("block") }
        gcdSync.add("after sync")
        output.line("GCD sync: \(gcdSync.joined(", "))")

        // The classic puzzle: four `async` blocks, then a `sync` one. The serial queue runs
        // them in order, and "4" comes after the `sync` returns. (The puzzle also logs "2" right
        // after the `async` calls; where it lands among the blocks varies from run to run, so
        // it is left out here.)
        let puzzle = Log()
        for label in ["1", "11", "111", "1111"] {
            serial.async { puzzle.add(label) }
        }
        serial.sync { puzzle.add("3") }
        puzzle.add("4")
        output.line("GCD serial queue: \(puzzle.joined(" "))")

        // Operations. `addOperation` returns at once, like `async` (suspended for the same
        // reason as above).
        let queue = OpQueue()
        queue.name = "gcd-sync-async"
        let opAsync = Log()
        queue.isSuspended = true
        queue.addOperation { opAsync.add("operation") }
        opAsync.add("after addOperation")
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        output.line("OpQueue addOperation: \(opAsync.joined(", "))")

        // Waiting, like `sync`: the operation runs on a worker thread while this one blocks.
        let opSync = Log()
        queue.addOperations([BlockOp { opSync.add("operation") }], waitUntilFinished: true)
        opSync.add("after addOperations")
        output.line("OpQueue addOperations(_:waitUntilFinished: true): \(opSync.joined(", "))")

        // The puzzle on a queue of width 1: equal priorities start in the order they were added.
        queue.maxConcurrentOperationCount = 1
        let opPuzzle = Log()
        for label in ["1", "11", "111", "1111"] {
            queue.addOperation { opPuzzle.add(label) }
        }
        queue.addOperations([BlockOp { opPuzzle.add("3") }], waitUntilFinished: true)
        opPuzzle.add("4")
        output.line("OpQueue width 1: \(opPuzzle.joined(" "))")
    }

    /// Lines recorded from any thread, in order.
    final class Log: Sendable {
        private let entries = Mutex<[String]>([])

        func add(_ entry: String) {
            entries.withLock { $0.append(entry) }
        }

        func joined(_ separator: String) -> String {
            entries.withLock { $0.joined(separator: separator) }
        }
    }
}
