import Testing
import Operations

/// What the randomized stress suites share: their queues and how they report a failed run.
enum StressReporting {
    /// A queue of a scenario: named for the reports, with the planned width, suspended if planned.
    static func queue(named name: String, width: Int, startsSuspended: Bool) -> OpQueue {
        let queue = OpQueue()
        queue.name = name
        queue.maxConcurrentOperationCount = width
        queue.isSuspended = startsSuspended
        return queue
    }

    /// Records a run's violations (at most 20; all of them are printed past that) with the seed
    /// that replays the run and the one that replays the test.
    static func record(_ violations: [String], seed: UInt64, testSeed: UInt64, sourceLocation: SourceLocation) {
        let replay = "stress seed \(seed) (test: OPERATIONS_STRESS_SEED=\(testSeed))"
        let limit = 20
        for violation in violations.prefix(limit) {
            Issue.record(Comment(rawValue: "\(replay): \(violation)"), sourceLocation: sourceLocation)
        }
        if violations.count > limit {
            print("\(replay): all \(violations.count) violations:")
            for violation in violations.prefix(500) {
                print("  \(violation)")
            }
            Issue.record(Comment(rawValue: "\(replay): \(violations.count - limit) more violation(s)"), sourceLocation: sourceLocation)
        }
    }
}
