import Dispatch

/// The pending stall checks of every queue, behind one timer (see ``OpQueue/scheduleStallCheck(generation:)``).
///
/// A queue whose members all wait for work elsewhere is *stalled*: normal while that work runs,
/// a sign of a dependency cycle if it lasts. Each such queue is checked again after
/// ``OpQueue/stallCheckDelay``. With a timer per queue, thousands of queues each waiting for one
/// operation (a fan-out across queues) cost thousands of Dispatch timers, and their checks
/// thousands of jobs competing with the work itself. Here the checks wait in one list, in the
/// order they were asked for (which is the order they fall due), one timer at a time runs the
/// due ones in one job, and the queues that stayed stalled are searched for cycles together.
///
enum StallChecks {
    private struct Check {
        // Strong: a weak reference would give the queue a side table, and every retain and
        // release of it after that takes the runtime's slow path. A queue released meanwhile
        // lives until its check (at most the delay), as with a timer of its own.
        let queue: OpQueue
        let generation: UInt64
        let due: UInt64
    }

    private struct State {
        var checks = RingBuffer<Check>()
        var isTimerArmed = false
        /// How many times a timer was armed, ever (for tests). Wraps.
        var timersArmed: UInt64 = 0
    }

    private static let state = LockedBox(State())

    /// How early a check may run to join a batch (a tenth of the delay).
    private static let coalescing: UInt64 = 5_000_000

    /// Checks `queue` after ``OpQueue/stallCheckDelay`` if it has made no progress since
    /// `generation`.
    static func schedule(_ queue: OpQueue, generation: UInt64) {
        let delay = OpQueue.stallCheckDelay
        let due = (DispatchTime.now() + delay.dispatchInterval).uptimeNanoseconds
        let arms: Bool = state.withLockedValue { state in
            state.checks.append(Check(queue: queue, generation: generation, due: due))
            guard !state.isTimerArmed else { return false }
            state.isTimerArmed = true
            state.timersArmed &+= 1
            return true
        }
        if arms { armTimer(after: delay) }
    }

    private static func armTimer(after delay: Duration) {
        DeadlineTimer.run(after: delay) { runDueChecks() }
    }

    /// Runs the checks that are due, and arms the timer for the next one, if any.
    private static func runDueChecks() {
        let now = DispatchTime.now().uptimeNanoseconds
        let (due, next): ([Check], UInt64?) = state.withLockedValue { state in
            var due: [Check] = []
            // Those due within the next few milliseconds go now too: checks asked for one by one
            // (a slow setup of many queues) are run in batches, not each by a timer of its own.
            while let first = state.checks.first, first.due <= now + coalescing {
                due.append(state.checks.popFirst()!)
            }
            guard let next = state.checks.first else {
                state.isTimerArmed = false
                return (due, nil)
            }
            state.timersArmed &+= 1
            return (due, next.due)
        }
        if let next {
            armTimer(after: .nanoseconds(Int64(clamping: next - min(next, now))))
        }
        // One search over the members of every queue that stayed stalled: each operation is
        // visited once, however many queues wait for the same work.
        var members: [Op] = []
        for check in due {
            members += check.queue.stallCheckFired(generation: check.generation)
        }
        // Without a backward edge or a pending barrier no cycle can exist (see
        // `DependencyCycles.mayExist`): the queues just wait for work elsewhere.
        if !members.isEmpty && DependencyCycles.mayExist {
            DependencyCycles.watchCycles(among: members)
        }
    }

    /// How many checks wait (for tests).
    static var pendingCount: Int {
        state.withLockedValue { $0.checks.count }
    }

    /// How many times a timer was armed so far (for tests).
    static var timersArmed: UInt64 {
        state.withLockedValue { $0.timersArmed }
    }
}
