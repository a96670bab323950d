import Testing
import Dispatch
@testable import Operations

/// Setting ``Op/timeout`` while the operation runs (re)arms it from that moment; clearing it
/// disarms it.
@Suite struct TimeoutSetWhileRunningTests {
    /// A body that runs until it is cancelled (30 s at most: a hang guard), after opening
    /// `started`.
    private static func untilCancelled(_ started: Gate) -> RecordingOp {
        RecordingOp(name: "runs-until-cancelled") { op in
            started.open()
            let giveUp = ContinuousClock.now + .seconds(30)
            while !op.isCancelled, ContinuousClock.now < giveUp {
                blockThread(milliseconds: 1)
            }
        }
    }

    // The tests drive from threads of their own: a test task that waited for a cooperative
    // thread while the suite's exit tests held them could see the body start tens of seconds late.

    @Test func aTimeoutSetClearedAndSetAgainWhileRunningFires() async {
        let started = Gate()
        let op = Self.untilCancelled(started)
        let didStart: Bool = await onOwnThread {
            OpQueue().addOperation(op)
            guard started.wait() else { return false }
            op.timeout = .seconds(20)
            op.timeout = nil
            op.timeout = .milliseconds(50)
            op.waitUntilFinished()
            return true
        }
        #expect(didStart)

        #expect(op.isCancelled)
        #expect((op.error as? OpTimeoutError)?.timeout == .milliseconds(50), "error: \(String(describing: op.error))")
    }

    @Test func aTimeoutChangedWhileRunningCountsTheNewValueFromThatMoment() async {
        let started = Gate()
        let op = Self.untilCancelled(started)
        op.timeout = .seconds(20)
        let finished = finishTimes(of: op)
        let set: ContinuousClock.Instant? = await onOwnThread {
            OpQueue().addOperation(op)
            guard started.wait() else { return nil }
            let set = ContinuousClock.now
            op.timeout = .milliseconds(100)
            op.waitUntilFinished()
            return set
        }
        guard let set else {
            Issue.record("the body never started")
            return
        }

        #expect(op.isCancelled)
        #expect((op.error as? OpTimeoutError)?.timeout == .milliseconds(100), "error: \(String(describing: op.error))")
        let elapsed = (finished.all.first ?? .now) - set
        #expect(elapsed >= .milliseconds(95))
        #expect(elapsed < .seconds(15))
    }

    @Test func aTimeoutClearedWhileRunningDoesNotFire() async {
        let started = Gate()
        let release = Gate()
        let op = RecordingOp { op in
            started.open()
            _ = release.wait()
        }
        op.timeout = .seconds(60)
        OpQueue().addOperation(op)
        #expect(await started.waitOffThread())
        // Armed from now, then disarmed at once: it would fire well before the body returns.
        op.timeout = .milliseconds(200)
        op.timeout = nil
        try? await Task.sleep(for: .milliseconds(600))
        release.open()
        await op.waitUntilFinished()

        #expect(!op.isCancelled)
        #expect(op.error == nil)
    }

    @Test func aTimeoutSetAfterTheWorkEndedDoesNotApply() async {
        let op = BlockOp {}
        let gate = Gate()
        let queue = OpQueue()
        op.addObserver(BlockObserver(willFinish: { op, _ in
            // The work is over: a timeout set now has nothing left to limit.
            op.timeout = .zero
            gate.open()
        }))
        queue.addOperation(op)
        await op.waitUntilFinished()
        #expect(await gate.waitOffThread())
        #expect(!op.isCancelled)
        #expect(op.error == nil)
    }
}
