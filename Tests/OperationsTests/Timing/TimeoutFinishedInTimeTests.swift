import Testing
import Dispatch
@testable import Operations

/// An operation whose work is over before its timeout passes is never touched by its timer, even
/// while it has not yet read as finished (its `willFinish` observers run, its `finish()` call is
/// on its way).
@Suite struct TimeoutFinishedInTimeTests {
    /// A callback-style operation that finishes inside `execute()`: its work is over as soon as
    /// it starts, whatever the load on Swift's cooperative pool.
    private final class FinishesAtOnce: AsyncOp, @unchecked Sendable {
        override func execute() {
            finish()
        }
    }

    /// The work ends as soon as it starts; an observer that was added first keeps the operation
    /// between its work and its finish until well after the timeout has passed.
    @Test(arguments: [false, true])
    func anOperationWhoseWorkEndedInTimeIsNeverCancelledByItsTimer(asynchronous: Bool) async {
        let op: Op = asynchronous ? FinishesAtOnce() : BlockOp {}
        op.name = "in-time"
        let cancelledDuringFinish = LockedBox<Bool?>(nil)
        op.addObserver(BlockObserver(willFinish: { op, _ in
            // The timer fires meanwhile; an operation whose work is over must not be cancelled.
            blockThread(milliseconds: 500)
            cancelledDuringFinish.withLockedValue { $0 = op.isCancelled }
        }))
        op.timeout = .milliseconds(100)
        OpQueue().addOperation(op)
        await op.waitUntilFinished()
        // Past any late firing of the timer too.
        try? await Task.sleep(for: .milliseconds(100))

        #expect(cancelledDuringFinish.withLockedValue { $0 } == false)
        #expect(!op.isCancelled)
        #expect(op.error == nil, "error: \(String(describing: op.error))")
    }
}
