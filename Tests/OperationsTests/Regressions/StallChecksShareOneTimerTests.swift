import Testing
import Dispatch
@testable import Operations

/// A queue whose members all wait for work elsewhere is checked again after a delay, to look
/// for dependency cycles. With a Dispatch timer per queue, a fan-out across thousands of queues
/// (each holding one dependent of the same operation) armed thousands of timers, whose checks
/// then ran as thousands of jobs beside the work itself: the complexity check of dependents
/// across queues grew faster than linear and varied from run to run. The checks now wait in
/// one list behind one timer.
@Suite(.timeLimit(.minutes(1)))
struct StallChecksShareOneTimerTests {
    @Test func thousandsOfStalledQueuesArmOneTimerAtATime() async {
        let outcome: (armed: UInt64, drained: Bool, ran: Bool) = await onOwnThread {
            let root = BlockOp {}
            let count = 2_000
            let ran = EventLog<Int>()
            let armedBefore = StallChecks.timersArmed
            // Each queue holds one dependent of `root`, which nothing has started: every queue
            // is stalled, and asks for a check.
            let queues = (0..<count).map { index -> OpQueue in
                let queue = OpQueue()
                let dependent = BlockOp { ran.append(index) }
                dependent.addDependency(root)
                queue.addOperation(dependent)
                return queue
            }
            let armed = StallChecks.timersArmed &- armedBefore
            // The checks run (they find no cycle) and leave nothing behind.
            let drained = eventually(seconds: 10) { StallChecks.pendingCount == 0 }
            OpQueue().addOperation(root)
            let allRan = eventually(seconds: 10) { ran.all.count == count }
            withExtendedLifetime(queues) {}
            return (armed, drained, allRan)
        }
        // Other tests running meanwhile arm the timer too, as their own queues stall and move
        // on, and a slow setup (under a sanitizer) spreads the checks over seconds, which run in
        // batches a few milliseconds apart; what must not happen is a timer per queue.
        #expect(outcome.armed < 2_000, "\(outcome.armed) timers for 2,000 stalled queues")
        #expect(outcome.drained)
        #expect(outcome.ran)
    }
}
