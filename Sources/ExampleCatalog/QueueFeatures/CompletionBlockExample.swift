import Operations
import Synchronization

/// A `completionBlock` running once its operation has finished, whether the operation ran or
/// was cancelled; the block being cleared after it runs; and waits returning only after it ran.
///
/// The guide's section *Setting Up a Completion Block* describes the block as a place for work
/// that is not part of the main task, such as telling interested parties that the operation is
/// done. The `NSOperation` reference adds that the block runs after the operation finishes, on a
/// thread of its own choosing, even for a cancelled operation.
enum CompletionBlockExample {
    /// What the blocks did, read once the waits have returned.
    final class Record: Sendable {
        /// Whether the completion block of the first operation has run.
        let completionRan = Atomic<Bool>(false)
        /// Whether the body of the cancelled operation ran (it should not).
        let cancelledBodyRan = Atomic<Bool>(false)
    }

    static let example = Example(
        name: "completion-blocks",
        title: "Completion blocks",
        source: "Guide: Setting Up a Completion Block; NSOperation reference",
        expected: [
            "main: resizing the image",
            "completion block: isFinished = true, isExecuting = false",
            "completion block: completionBlock already reads nil = true",
            "waitUntilFinished() returned after the completion block ran: true",
            "completionBlock once it has run: nil",
            "completion block of a cancelled operation: isCancelled = true, isFinished = true",
            "the cancelled operation's main ran: false",
            "a block set after the operation finished is dropped: completionBlock is nil = true",
        ]
    ) { output in
        let queue = OpQueue()
        let record = Record()

        let resize = BlockOp { output.line("main: resizing the image") }
        resize.name = "resize"
        // A completion block takes no arguments: it captures what it needs. Capturing the
        // operation itself makes a reference cycle, which the library breaks by setting the block
        // back to nil when it starts (an operation that might never finish would keep it: capture
        // it weakly there).
        resize.completionBlock = {
            output.line("completion block: isFinished = \(resize.isFinished), isExecuting = \(resize.isExecuting)")
            output.line("completion block: completionBlock already reads nil = \(resize.completionBlock == nil)")
            record.completionRan.store(true, ordering: .releasing)
        }
        queue.addOperation(resize)

        // The block runs on a worker thread after the operation finished (dependents of the
        // operation may already be running by then), and the waits return only after it has
        // returned, so whatever it sets is visible here.
        resize.waitUntilFinished()
        output.line("waitUntilFinished() returned after the completion block ran: \(record.completionRan.load(ordering: .acquiring))")
        output.line("completionBlock once it has run: \(resize.completionBlock == nil ? "nil" : "still set")")

        // A cancelled operation finishes without running its main, and its completion block
        // still runs: the block is the place to learn that an operation is over, however it ended.
        let skipped = BlockOp { record.cancelledBodyRan.store(true, ordering: .releasing) }
        skipped.name = "skipped"
        skipped.completionBlock = {
            output.line("completion block of a cancelled operation: isCancelled = \(skipped.isCancelled), isFinished = \(skipped.isFinished)")
        }
        skipped.cancel()
        queue.addOperation(skipped)
        skipped.waitUntilFinished()
        output.line("the cancelled operation's main ran: \(record.cancelledBodyRan.load(ordering: .acquiring))")

        // Too late: a block set once the operation reads as finished never runs, and it is
        // released at once.
        resize.completionBlock = { output.line("this line is never printed") }
        output.line("a block set after the operation finished is dropped: completionBlock is nil = \(resize.completionBlock == nil)")
        queue.waitUntilAllOperationsAreFinished()
    }
}
