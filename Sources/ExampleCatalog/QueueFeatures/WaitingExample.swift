import Operations

/// Waiting for an operation and for a queue: the blocking waits of synchronous code
/// (`waitUntilFinished()`, `addOperations(_:waitUntilFinished: true)`,
/// `waitUntilAllOperationsAreFinished()`) and their `async` forms, which suspend instead, plus
/// awaiting the value of an operation made from an `async` closure.
///
/// The guide's section *Waiting for Operations to Finish* allows waiting when the code that
/// created an operation also needs its result, but recommends avoiding it where possible: a
/// blocked thread adds serialization and limits concurrency. It must never happen on the main
/// thread: wait from a secondary thread or from another operation.
///
/// Which to use:
/// - In synchronous code on a thread that may block (a thread of your own, a Dispatch queue's
///   work item, the body of an operation), the blocking waits. The library's worker pool notices
///   an operation that blocks and adds a worker, so a waiting operation does not starve others.
/// - In `async` code, always the `await` forms: the blocking ones are `noasync`, because blocking
///   a thread of Swift's small cooperative pool can stall every task in the program.
/// - Better than either, where it fits: a dependency or a completion block, which wait without
///   anyone waiting.
///
/// The example's body is `async`, so it runs its blocking part as the body of an operation,
/// which is where the guide suggests to wait, and awaits that operation.
enum WaitingExample {
    /// Results the operations leave behind, read once the waits have returned.
    final class Results: Sendable {
        private let values = Locked<[String: Int]>([:])

        /// Adds `amount` to the value called `name`.
        func add(_ amount: Int, to name: String) {
            values.withLock { $0[name, default: 0] += amount }
        }

        /// Multiplies the value called `name` by `factor`.
        func multiply(_ name: String, by factor: Int) {
            values.withLock { $0[name, default: 0] *= factor }
        }

        /// The value called `name`.
        subscript(name: String) -> Int {
            values.withLock { $0[name, default: 0] }
        }
    }

    /// Work for an `async` operation: renders a page and returns its size.
    static func render(page: Int) async throws -> Int {
        await Task.yield()
        return page * 1_000
    }

    static let example = Example(
        name: "waiting",
        title: "Waiting for operations and queues",
        source: "Guide: Waiting for Operations to Finish; NSOperation and NSOperationQueue references",
        expected: [
            "blocking: waitUntilFinished() returned, square = 144",
            "blocking: addOperations(_:waitUntilFinished: true) returned, sum = 6",
            "blocking: waitUntilAllOperationsAreFinished() returned, total = 60, operationCount = 0",
            "await: the operation that blocked has finished",
            "await: waitUntilFinished() returned, cube = 125",
            "await: addOperations(_:waitUntilFinished: true) returned, product = 24",
            "await: waitUntilAllOperationsAreFinished() returned, tally = 6, operationCount = 0",
            "await: addOperation { ... }.value = 3000",
        ],
        runAsync: { output in
            let queue = OpQueue()
            queue.name = "work"
            let results = Results()

            // 1. Blocking waits, in synchronous code that may block: here the body of an operation of
            //    another queue (waiting from an operation of `queue` for `queue` itself would never
            //    return, and traps).
            let blockingPart = BlockOp {
                let square = BlockOp { results.add(12 * 12, to: "square") }
                queue.addOperation(square)
                square.waitUntilFinished()
                output.line("blocking: waitUntilFinished() returned, square = \(results["square"])")

                let parts = (1...3).map { number in BlockOp { results.add(number, to: "sum") } }
                queue.addOperations(parts, waitUntilFinished: true)
                output.line("blocking: addOperations(_:waitUntilFinished: true) returned, sum = \(results["sum"])")

                for number in 1...3 {
                    queue.addOperation { results.add(number * 10, to: "total") }
                }
                // Other threads could keep adding operations meanwhile, which prolongs this wait.
                queue.waitUntilAllOperationsAreFinished()
                output.line("blocking: waitUntilAllOperationsAreFinished() returned, total = \(results["total"]), operationCount = \(queue.operationCount)")
            }
            blockingPart.name = "blocking waits"
            let waiters = OpQueue()
            waiters.name = "waiters"
            waiters.addOperation(blockingPart)

            // 2. The same waits in `async` code, which suspend: no thread is held meanwhile.
            await blockingPart.waitUntilFinished()
            output.line("await: the operation that blocked has finished")

            let cube = BlockOp { results.add(5 * 5 * 5, to: "cube") }
            queue.addOperation(cube)
            await cube.waitUntilFinished()
            output.line("await: waitUntilFinished() returned, cube = \(results["cube"])")

            results.add(1, to: "product")
            let factors = (2...4).map { factor in
                BlockOp {
                    // Multiplication commutes: the order of these concurrent operations does not matter.
                    results.multiply("product", by: factor)
                }
            }
            await queue.addOperations(factors, waitUntilFinished: true)
            output.line("await: addOperations(_:waitUntilFinished: true) returned, product = \(results["product"])")

            for number in 1...3 {
                queue.addOperation { results.add(number, to: "tally") }
            }
            await queue.waitUntilAllOperationsAreFinished()
            output.line("await: waitUntilAllOperationsAreFinished() returned, tally = \(results["tally"]), operationCount = \(queue.operationCount)")

            // 3. An `async` closure becomes an operation whose value can be awaited like a task's;
            //    an error it throws would be thrown here.
            let size = try await queue.addOperation { try await render(page: 3) }.value
            output.line("await: addOperation { ... }.value = \(size)")
        }
    )
}
