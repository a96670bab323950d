// A first program, as a newcomer writes one: top-level code in `main.swift` that uses `await`.
// `swift run first-program` runs it.
import Operations

// Count the words of a few texts, two texts at a time.
let texts = [
    "An operation is an object that wraps a piece of work",
    "A queue starts each operation once it is ready and a slot is free",
    "Dependencies say which operations must finish first",
]

let queue = OpQueue()
queue.name = "word counts"
queue.maxConcurrentOperationCount = 2

// An `async` closure becomes an operation whose value is awaited, like a task's.
let counts = texts.map { text in
    queue.addOperation { () async -> Int in
        text.split(separator: " ").count
    }
}

// An operation that runs once every count has finished.
let report = BlockOp { print("Every text is counted.") }
for count in counts {
    report.addDependency(count)
}
queue.addOperation(report)

var total = 0
for count in counts {
    total += try await count.value
}

/// Waits for `report`, then for `queue` to be empty, without blocking a thread.
///
/// The waits that also exist as blocking calls (`waitUntilFinished()`,
/// `waitUntilAllOperationsAreFinished()`, `addOperations(_:waitUntilFinished:)`) are awaited from
/// an `async` function: in top-level code, Swift 6.3 picks the blocking versions even after
/// `await`, and reports them as unavailable from asynchronous contexts.
func finish(_ report: Op, in queue: OpQueue) async {
    await report.waitUntilFinished()
    await queue.waitUntilAllOperationsAreFinished()
}
await finish(report, in: queue)

print("\(texts.count) texts, \(total) words.")
