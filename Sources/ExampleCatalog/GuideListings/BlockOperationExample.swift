import Operations
import Synchronization

/// Listing 2-2, *Creating an NSBlockOperation object*: a ``BlockOp`` made from one block, with
/// more blocks added by ``BlockOp/addExecutionBlock(_:)``.
///
/// The Objective-C listing creates the operation with `blockOperationWithBlock:` and a block that
/// logs "Beginning operation."; the guide then adds blocks with `addExecutionBlock:`. As the guide
/// describes, the blocks run concurrently and the operation finishes when the last of them
/// returns, so waiting for it is like joining a set of threads. (Foundation on Linux runs them one
/// after another; `BlockOp` runs them side by side.)
///
/// Since the blocks run at the same time, the order of their work is not fixed: each adds its
/// share of a sum into shared atomics, and the example prints the totals once the operation has
/// finished, which do not depend on that order. To run blocks one after another, make each its
/// own operation on a queue whose `maxConcurrentOperationCount` is 1.
enum BlockOperationExample {
    /// What the blocks share: how many have run and the sum of their shares, in atomics because
    /// the blocks update them at the same time.
    final class Tally: Sendable {
        let blocksRun = Atomic<Int>(0)
        let sum = Atomic<Int>(0)

        /// Adds the numbers of `range` to the sum and counts one more block.
        func add(_ range: ClosedRange<Int>) {
            sum.add(range.reduce(0, +), ordering: .relaxed)
            blocksRun.add(1, ordering: .relaxed)
        }
    }

    static let example = Example(
        name: "block-operation",
        title: "Blocks that run concurrently",
        source: "Listing 2-2",
        expected: [
            "execution blocks: 4",
            "Beginning operation.",
            "finished: true",
            "blocks that ran: 4",
            "sum of 1...100: 5050",
        ]
    ) { output in
        let tally = Tally()

        // The listing's operation, made from one block...
        let operation = BlockOp {
            output.line("Beginning operation.")
            tally.add(1...25)
        }
        // ...and more blocks, which will run at the same time as the first.
        for share in [26...50, 51...75, 76...100] {
            operation.addExecutionBlock {
                tally.add(share)
            }
        }
        output.line("execution blocks: \(operation.executionBlocks.count)")

        let queue = OpQueue()
        queue.addOperation(operation)
        // Returns once the last block has returned: the operation is finished only then.
        operation.waitUntilFinished()
        output.line("finished: \(operation.isFinished)")
        // Relaxed loads are enough: every block's update happened before the wait returned.
        output.line("blocks that ran: \(tally.blocksRun.load(ordering: .relaxed))")
        output.line("sum of 1...100: \(tally.sum.load(ordering: .relaxed))")
    }
}
