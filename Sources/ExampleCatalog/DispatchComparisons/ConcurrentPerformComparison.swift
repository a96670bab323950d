import Dispatch
import Operations

/// `DispatchQueue.concurrentPerform(iterations:execute:)` next to a ``BlockOp`` with one
/// execution block per iteration, and to N operations on a queue and a wait: run a loop's
/// iterations in parallel and go on once all of them are done.
///
/// What the operation forms add: the work is an object that can be cancelled (its blocks check
/// ``Op/isCancelled``), made a dependency of other work, given a completion block, or added to a
/// queue with a width instead of being run on the spot; the N-operations form also lets the
/// caller go on and wait later. What GCD keeps, and it is a lot: `concurrentPerform` is built for
/// this, sizes itself to the cores and costs next to nothing per iteration, while every
/// execution block or operation is an allocation and a hand-off. For many small iterations it is
/// the right tool; operations pay off when each piece is substantial.
enum ConcurrentPerformComparison {
    /// The example: `swift run examples gcd-concurrent-perform`.
    static let example = Example(
        name: "gcd-concurrent-perform",
        title: "concurrentPerform vs a BlockOp with several blocks",
        source: "GCD: DispatchQueue.concurrentPerform",
        expected: [
            "GCD concurrentPerform: 8 iterations done when it returned: 0 1 4 9 16 25 36 49",
            "BlockOp with 8 execution blocks, start(): all done when it returned: 0 1 4 9 16 25 36 49",
            "OpQueue width 4, 8 operations, addOperations(_:waitUntilFinished: true): 0 1 4 9 16 25 36 49",
        ]
    ) { output in
        let iterations = 8

        // GCD: the calling thread takes part, and the call returns after the last iteration.
        let gcdSquares = Recorder<Int>()
        DispatchQueue.concurrentPerform(iterations: iterations) { index in
            gcdSquares.append(index * index)
        }
        output.line("GCD concurrentPerform: \(gcdSquares.all.count) iterations done when it returned: \(sorted(gcdSquares))")

        // Operations: a BlockOp runs its blocks side by side, the first on the thread that
        // started it, and finishes when the last returns; `start()` returns then.
        let blockSquares = Recorder<Int>()
        let loop = BlockOp()
        for index in 0..<iterations {
            loop.addExecutionBlock { blockSquares.append(index * index) }
        }
        loop.start()
        output.line("BlockOp with \(loop.executionBlocks.count) execution blocks, start(): all done when it returned: \(sorted(blockSquares))")

        // Or one operation per iteration on a queue with a width, and a wait.
        let queue = OpQueue()
        queue.name = "gcd-concurrent-perform"
        queue.maxConcurrentOperationCount = 4
        let queueSquares = Recorder<Int>()
        let operations = (0..<iterations).map { index in BlockOp { queueSquares.append(index * index) } }
        queue.addOperations(operations, waitUntilFinished: true)
        output.line("OpQueue width 4, \(operations.count) operations, addOperations(_:waitUntilFinished: true): \(sorted(queueSquares))")
    }

    /// The squares in `squares`, smallest first (so in the order of their iterations, which
    /// record them in any order), separated by spaces.
    private static func sorted(_ squares: Recorder<Int>) -> String {
        squares.all.sorted().map(String.init).joined(separator: " ")
    }
}
