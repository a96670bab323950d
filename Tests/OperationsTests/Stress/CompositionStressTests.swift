import Testing
import Dispatch
@testable import Operations

/// Randomized stress tests of composition: groups, conditions, exclusivity and observers mixed in
/// random graphs across queues (see ``CompositionScenario`` for the mix and ``CompositionHarness``
/// for the checks). Each test prints its seed (`stress seed: …`); set `OPERATIONS_STRESS_SEED` to
/// it to replay a failure. `OPERATIONS_SOAK_SECONDS=N` also runs fresh scenarios for N seconds.
///
/// Violations that match a bug this harness found before (``CompositionKnownIssue``, all fixed)
/// are reported under that bug's name.
///
/// Serialized: the tests check that the shared worker pool ends idle.
@Suite(.serialized) struct CompositionStressTests {
    /// Random graphs of plain, subclassed and asynchronous operations and nested groups over 2-4
    /// queues, with conditions, exclusivity categories, observers, failures, children added at
    /// run time and cancellations, and with retries, timeouts, delays, injections and maps, keep
    /// every invariant, release every operation, give back every category and leave the worker
    /// pool idle.
    @Test func randomGraphsWithGroupsConditionsAndExclusivityKeepEveryInvariant() async {
        let seed = StressEnvironment.seed()
        var statistics: [String: Int] = [:]
        let rounds = 16
        for round in 0..<rounds {
            let scenario = CompositionScenario.generate(seed: seed &+ UInt64(round))
            let outcome = await onOwnThread { CompositionHarness.run(scenario) }
            Self.report(outcome, testSeed: seed)
            if outcome.hung { return }
            statistics.merge(outcome.statistics, uniquingKeysWith: +)
        }
        print("composition stress: \(rounds) scenarios, \(StressTests.describe(statistics))")
        if let violation = await onOwnThread({ StressHarness.workerPoolIdleViolation() }) {
            Issue.record("stress seed \(seed): \(violation)")
        }
    }

    /// The soak: fresh scenarios for `OPERATIONS_SOAK_SECONDS` seconds.
    @Test(.enabled(if: StressEnvironment.soakSeconds != nil, "set OPERATIONS_SOAK_SECONDS to run the soak"))
    func soakOfCompositionKeepsEveryInvariant() async {
        guard let seconds = StressEnvironment.soakSeconds else { return }
        let seed = StressEnvironment.seed()
        var rng = SplitMix64(seed: seed)
        var roundSeed = seed
        let clock = ContinuousClock()
        let start = clock.now
        var rounds = 0, operations = 0, failedRounds = 0
        var statistics: [String: Int] = [:]
        while clock.now - start < .seconds(seconds) {
            let scenario = CompositionScenario.generate(seed: roundSeed, operations: 200...400)
            let outcome = await onOwnThread { CompositionHarness.run(scenario) }
            rounds += 1
            operations += outcome.operationCount
            statistics.merge(outcome.statistics, uniquingKeysWith: +)
            if !outcome.violations.isEmpty || !outcome.known.isEmpty {
                if !outcome.violations.isEmpty { failedRounds += 1 }
                // A soak round replays as the first round of a run started with its seed.
                Self.report(outcome, testSeed: roundSeed)
            }
            if outcome.hung { break }
            roundSeed = rng.next()
        }
        print("composition soak: \(rounds) rounds, \(operations) operations, \(failedRounds) failed round(s), stress seed \(seed); \(StressTests.describe(statistics))")
        if let violation = await onOwnThread({ StressHarness.workerPoolIdleViolation() }) {
            Issue.record("stress seed \(seed): \(violation)")
        }
    }

    /// Records a run's violations (at most 20) with the seed that replays it, and each violation
    /// that matches a bug found before as a regression of that bug (one per kind, with examples).
    static func report(_ outcome: CompositionHarness.Outcome, testSeed: UInt64, sourceLocation: SourceLocation = #_sourceLocation) {
        StressReporting.record(outcome.violations, seed: outcome.seed, testSeed: testSeed, sourceLocation: sourceLocation)
        let replay = "stress seed \(outcome.seed) (test: OPERATIONS_STRESS_SEED=\(testSeed))"
        for issue in CompositionKnownIssue.allCases {
            let examples = outcome.known.filter { $0.0 == issue }.map(\.1)
            guard !examples.isEmpty else { continue }
            Issue.record(Comment(rawValue: "\(replay): regression of \(issue.rawValue): \(examples.count) time(s), e.g. \(examples.prefix(3))"),
                         sourceLocation: sourceLocation)
        }
    }
}
