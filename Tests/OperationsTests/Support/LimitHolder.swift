import Dispatch
@testable import Operations

/// A block operation with `condition`.
func conditioned(_ condition: OpCondition, name: String? = nil, _ block: @escaping @Sendable () -> Void = {}) -> BlockOp {
    let op = BlockOp(block: block)
    op.name = name
    op.addCondition(condition)
    return op
}

/// An operation with `condition` that opens `started` when it runs and then holds on until
/// `release` is opened.
struct LimitHolder: Sendable {
    let op: BlockOp
    let started = Gate()
    let release = Gate()

    init(_ condition: OpCondition, name: String? = nil) {
        let started = self.started
        let release = self.release
        op = conditioned(condition, name: name) {
            started.open()
            release.wait()
        }
    }

    /// Adds the holder to `queue` and waits, off the cooperative pool, until it runs.
    func run(on queue: OpQueue) async -> Bool {
        queue.addOperation(op)
        return await started.waitOffThread()
    }
}

/// Waits, suspending, until every queue of `queues` is empty (`false` on a hang).
func drain(_ queues: [OpQueue]) async -> Bool {
    await eventuallyAsync { queues.allSatisfy { $0.operationCount == 0 } }
}
