@testable import Operations

/// A stress-test operation with a synchronous body (an `Op` subclass overriding `main()`).
final class StressSyncOp: Op, @unchecked Sendable {
    // @unchecked Sendable: its own stored properties are immutable `let`s of Sendable types; the
    // rest of its state is Op's, which is thread-safe.
    let run: StressRun
    let node: Int

    init(run: StressRun, node: Int) {
        self.run = run
        self.node = node
        super.init()
    }

    override func main() {
        run.syncBody(of: node, operation: self)
    }
}
