@testable import Operations

/// A stress-test asynchronous operation: `execute()` starts the work, which calls `finish()`
/// inline, from `DispatchQueue.global()`, or from the scenario's serial queue; or the work is the
/// `async` body, which the library runs in a `Task` and finishes.
final class StressAsyncOp: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: its own stored properties are immutable `let`s of Sendable types; the
    // rest of its state is AsyncOp's, which is thread-safe.
    let run: StressRun
    let node: Int

    init(run: StressRun, node: Int) {
        self.run = run
        self.node = node
        super.init()
    }

    override func execute() {
        if run.runsAsAsyncBody(node) {
            super.execute()   // the library runs `execute() async throws` in a Task
        } else {
            run.asyncExecute(of: node, operation: self)
        }
    }

    override func execute() async throws {
        await run.asyncBody(of: node, operation: self)
    }
}
