import Testing
import Dispatch
@testable import Operations

/// Which values ``Op/timeout`` takes: a negative one is a programmer error; zero cancels the
/// operation as it starts, before its body runs.
@Suite struct TimeoutValueRulesTests {
    @Test(.oneExitTestAtATime) func aNegativeTimeoutTrapsNamingTheOperationAndTheValue() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = BlockOp {}
            op.name = "negative-limit"
            op.timeout = .milliseconds(-5)
        }
        expectStandardError(of: result, toContain: ["\"negative-limit\"", "\(Duration.milliseconds(-5))", "negative", "nil"])
    }

    @Test func aZeroTimeoutCancelsTheOperationBeforeItsBodyRuns() async {
        for _ in 0..<20 {
            let cancelledAtStart = LockedBox<Bool?>(nil)
            let op = RecordingOp(name: "zero") { op in
                cancelledAtStart.withLockedValue { $0 = op.isCancelled }
            }
            op.timeout = .zero
            OpQueue().addOperation(op)
            await op.waitUntilFinished()

            #expect(cancelledAtStart.withLockedValue { $0 } == true)
            #expect(op.isCancelled)
            #expect((op.error as? OpTimeoutError)?.timeout == .zero, "error: \(String(describing: op.error))")
        }
    }

    @Test func aZeroTimeoutCancelsTheTaskOfAnAsyncBodyBeforeItRuns() async {
        let cancelledAtStart = LockedBox<Bool?>(nil)
        let op = AsyncOp {
            cancelledAtStart.withLockedValue { $0 = Task.isCancelled }
        }
        op.timeout = .zero
        OpQueue().addOperation(op)
        await op.waitUntilFinished()

        #expect(cancelledAtStart.withLockedValue { $0 } == true)
        #expect(op.error is OpTimeoutError)
    }

    @Test func aZeroTimeoutSetWhileRunningCancelsAtOnce() async {
        let started = Gate()
        let op = RecordingOp { op in
            started.open()
            let giveUp = ContinuousClock.now + .seconds(30)
            while !op.isCancelled, ContinuousClock.now < giveUp {
                blockThread(milliseconds: 1)
            }
        }
        // Driven from a thread of its own: a test task waiting for a cooperative thread (held by
        // the suite's exit tests) could resume after the body gave up.
        let cancelledAtOnce: Bool? = await onOwnThread {
            OpQueue().addOperation(op)
            guard started.wait() else { return nil }
            op.timeout = .zero
            // Cancelled before the setter returns.
            let cancelled = op.isCancelled
            op.waitUntilFinished()
            return cancelled
        }
        #expect(cancelledAtOnce == true)
        #expect((op.error as? OpTimeoutError)?.timeout == .zero)
    }
}
