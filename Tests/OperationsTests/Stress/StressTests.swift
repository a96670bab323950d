import Testing
import Dispatch
@testable import Operations

/// Randomized stress and model tests. Each test prints its seed (`stress seed: …`); set
/// `OPERATIONS_STRESS_SEED` to it to replay a failure. `OPERATIONS_SOAK_SECONDS=N` enables the
/// soak test, which runs fresh scenarios of thousands of operations for N seconds.
///
/// Serialized: the tests check that the shared worker pool ends idle, so they must not keep it
/// busy for each other.
@Suite(.serialized) struct StressTests {
    /// Random DAGs across several queues (random widths, priorities, suspensions, barriers,
    /// cancellations before and during execution, observers, completion blocks, children added
    /// from bodies, asynchronous operations finishing on other threads) keep every invariant of
    /// ``InvariantChecker``, release every operation, and leave no thread behind.
    @Test func randomGraphsAcrossQueuesKeepEveryInvariant() async {
        let seed = StressEnvironment.seed()
        var statistics: [String: Int] = [:]
        let rounds = 6
        for round in 0..<rounds {
            let scenario = StressScenario.generate(seed: seed &+ UInt64(round), config: .short)
            let outcome = await onOwnThread { StressHarness.run(scenario, config: .short) }
            StressTests.report(outcome, testSeed: seed)
            if outcome.hung { return }
            statistics.merge(outcome.statistics, uniquingKeysWith: +)
        }
        print("stress: \(rounds) scenarios, \(StressTests.describe(statistics))")
        if let violation = await onOwnThread({ StressHarness.workerPoolIdleViolation() }) {
            Issue.record("stress seed \(seed): \(violation)")
        }
    }

    /// The soak: fresh seeds for `OPERATIONS_SOAK_SECONDS` seconds, thousands of operations per
    /// round; prints rounds, operations and operations per second.
    @Test(.enabled(if: StressEnvironment.soakSeconds != nil, "set OPERATIONS_SOAK_SECONDS to run the soak"))
    func soakKeepsEveryInvariantOverMillionsOfOperations() async {
        guard let seconds = StressEnvironment.soakSeconds else { return }
        let seed = StressEnvironment.seed()
        var rng = SplitMix64(seed: seed)
        var roundSeed = seed
        let clock = ContinuousClock()
        let start = clock.now
        var rounds = 0, operations = 0, violations = 0, failedRounds = 0
        while clock.now - start < .seconds(seconds) {
            let scenario = StressScenario.generate(seed: roundSeed, config: .soak)
            let outcome = await onOwnThread { StressHarness.run(scenario, config: .soak) }
            rounds += 1
            operations += outcome.operationCount
            if !outcome.violations.isEmpty {
                failedRounds += 1
                violations += outcome.violations.count
                // A soak round replays as the first round of a soak started with its seed.
                StressTests.report(outcome, testSeed: roundSeed)
            }
            if outcome.hung { break }
            if let violation = await onOwnThread({ StressHarness.workerPoolIdleViolation() }) {
                violations += 1
                Issue.record("stress seed \(roundSeed): \(violation)")
                break
            }
            roundSeed = rng.next()
        }
        let duration = clock.now - start
        let elapsed = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        print("soak: \(rounds) rounds, \(operations) operations in \(Int(elapsed)) s, \(Int(Double(operations) / elapsed)) operations/s, \(violations) violation(s) in \(failedRounds) round(s), stress seed \(seed)")
    }

    /// The statistics of runs, sorted by name.
    static func describe(_ statistics: [String: Int]) -> String {
        statistics.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }

    /// Records a run's violations (at most 20) with the seed that replays it.
    static func report(_ outcome: StressHarness.Outcome, testSeed: UInt64, sourceLocation: SourceLocation = #_sourceLocation) {
        StressReporting.record(outcome.violations, seed: outcome.seed, testSeed: testSeed, sourceLocation: sourceLocation)
    }
}

// MARK: - Priority model

extension StressTests {
    /// Deterministic checks of the priority model of a width-1 queue: among operations that are
    /// ready together, the highest priority starts first, equal priorities in the order they
    /// became ready.
    @Suite struct PriorityModel {
        /// Ready operations added in random batches to a suspended width-1 queue start, once it
        /// is resumed, by priority and then in the order they were added.
        @Test func suspendedSerialQueueStartsReadyOperationsByPriorityThenInOrderOfAddition() {
            let seed = StressEnvironment.seed()
            var rng = SplitMix64(seed: seed)
            for round in 0..<6 {
                let queue = OpQueue()
                queue.maxConcurrentOperationCount = 1
                queue.isSuspended = true
                let log = EventLog<Int>()
                let (operations, priorities) = makeOperations(log: log, &rng)
                var position = 0
                while position < operations.count {
                    let size = Int.random(in: 1...10, using: &rng)
                    queue.addOperations(Array(operations[position..<min(operations.count, position + size)]), waitUntilFinished: false)
                    position += size
                }
                queue.isSuspended = false
                guard checkStartOrder(of: queue, log: log, expected: PriorityModel.expectedOrder(priorities),
                                      priorities: priorities, seed: seed, round: round) else { return }
            }
        }

        /// Changing the priority of operations waiting in a suspended width-1 queue moves them: they
        /// start by their last priority, and among equals in the order they got it (added, or moved).
        @Test func suspendedSerialQueueHonoursPriorityChangesOfWaitingOperations() {
            let seed = StressEnvironment.seed()
            var rng = SplitMix64(seed: seed)
            for round in 0..<6 {
                let queue = OpQueue()
                queue.maxConcurrentOperationCount = 1
                queue.isSuspended = true
                let log = EventLog<Int>()
                var (operations, priorities) = makeOperations(log: log, &rng)
                // When each operation got its current priority: its addition, or its last move.
                var order = Array(operations.indices)
                var clock = operations.count
                queue.addOperations(operations, waitUntilFinished: false)
                for _ in 0..<Int.random(in: 1...(2 * operations.count), using: &rng) {
                    let index = Int.random(in: operations.indices, using: &rng)
                    let priority = rng.pick(Op.QueuePriority.allCases)
                    operations[index].queuePriority = priority
                    if priority != priorities[index] {
                        priorities[index] = priority
                        order[index] = clock
                        clock += 1
                    }
                }
                queue.isSuspended = false
                let expected = operations.indices.sorted { lhs, rhs in
                    priorities[lhs] != priorities[rhs] ? priorities[lhs] > priorities[rhs] : order[lhs] < order[rhs]
                }
                guard checkStartOrder(of: queue, log: log, expected: expected,
                                      priorities: priorities, seed: seed, round: round) else { return }
            }
        }

        /// Operations of a width-1 queue that all wait for one operation started by hand become
        /// ready together when it finishes, and start by priority, then in the order they started
        /// to depend on it.
        @Test func operationsReleasedTogetherByAManualStartBeginByPriorityThenInOrder() {
            let seed = StressEnvironment.seed()
            var rng = SplitMix64(seed: seed)
            for round in 0..<6 {
                let queue = OpQueue()
                queue.maxConcurrentOperationCount = 1
                let log = EventLog<Int>()
                let trigger = BlockOp {}
                let (operations, priorities) = makeOperations(log: log, &rng)
                for operation in operations {
                    operation.addDependency(trigger)
                }
                // The order of addition does not matter: they become ready together, in the order
                // they started to depend on the trigger.
                queue.addOperations(operations.shuffled(using: &rng), waitUntilFinished: false)
                trigger.start()
                guard checkStartOrder(of: queue, log: log, expected: PriorityModel.expectedOrder(priorities),
                                      priorities: priorities, seed: seed, round: round) else { return }
            }
        }

        /// The same, when the operation they wait for runs in their own queue (its drainer picks
        /// the next operation right after it).
        @Test func operationsReleasedTogetherByAnOperationOfTheirQueueBeginByPriorityThenInOrder() {
            let seed = StressEnvironment.seed()
            var rng = SplitMix64(seed: seed)
            for round in 0..<6 {
                let queue = OpQueue()
                queue.maxConcurrentOperationCount = 1
                queue.isSuspended = true
                let log = EventLog<Int>()
                let trigger = RecordingOp { _ in log.append(-1) }
                trigger.queuePriority = rng.pick(Op.QueuePriority.allCases)
                let (operations, priorities) = makeOperations(log: log, &rng)
                for operation in operations {
                    operation.addDependency(trigger)
                }
                queue.addOperations(([trigger] + operations).shuffled(using: &rng), waitUntilFinished: false)
                queue.isSuspended = false
                guard checkStartOrder(of: queue, log: log, expected: [-1] + PriorityModel.expectedOrder(priorities),
                                      priorities: priorities, seed: seed, round: round) else { return }
            }
        }

        /// 20 to 80 operations with random priorities that log their index when they start; some
        /// are asynchronous and hold the queue until another thread finishes them.
        private func makeOperations(log: EventLog<Int>, _ rng: inout SplitMix64) -> ([Op], [Op.QueuePriority]) {
            let count = Int.random(in: 20...80, using: &rng)
            var operations: [Op] = []
            var priorities: [Op.QueuePriority] = []
            for index in 0..<count {
                let operation: Op = rng.chance(0.3)
                    ? LoggingAsyncOp(index: index, log: log)
                    : RecordingOp { _ in log.append(index) }
                let priority = rng.pick(Op.QueuePriority.allCases)
                operation.queuePriority = priority
                operations.append(operation)
                priorities.append(priority)
            }
            return (operations, priorities)
        }

        /// The indices sorted by priority, highest first, keeping the index order among equals.
        /// Waits for `queue` to empty and records an issue if it hung (returning `false`) or started
        /// its operations in another order than `expected`.
        private func checkStartOrder(of queue: OpQueue, log: EventLog<Int>, expected: [Int],
                                     priorities: [Op.QueuePriority], seed: UInt64, round: Int) -> Bool {
            guard StressHarness.waitUntilEmpty([queue]) else {
                Issue.record("stress seed \(seed) round \(round): hang, started \(log.all)")
                return false
            }
            if log.all != expected {
                Issue.record("stress seed \(seed) round \(round): started \(log.all) with priorities \(priorities.map(\.rawValue)), expected \(expected)")
            }
            return true
        }

        static func expectedOrder(_ priorities: [Op.QueuePriority]) -> [Int] {
            priorities.indices.sorted { lhs, rhs in
                priorities[lhs] != priorities[rhs] ? priorities[lhs] > priorities[rhs] : lhs < rhs
            }
        }
    }
}

// MARK: - Dependency cycles

extension StressTests {
    /// Random graphs in suspended queues get back edges. An edge that closes a cycle of
    /// dependencies changes nothing and is reported found; once the queues are resumed, waiting
    /// for them ends the cycles (cycles through barriers included) with a `DependencyCycleError`.
    /// Every error names a real cycle, the bodies of its operations never run, each cycle ended is
    /// reported ended once to `OpDiagnostics` (read through `DiagnosticsRecorder.shared`, never by
    /// swapping the handler), every other operation runs normally, and every operation is
    /// released at the end.
    @Suite(.serialized) struct Cycles {
        @Test func backEdgesAreReportedAndWaitsEndExactlyTheOperationsOnTheirCycles() async {
            let seed = StressEnvironment.seed()
            var cycles = 0
            for round in 0..<4 {
                let scenario = StressScenario.generate(seed: seed &+ UInt64(round), config: .cycles)
                let outcome = await onOwnThread { StressHarness.run(scenario, config: .cycles) }
                StressTests.report(outcome, testSeed: seed)
                if outcome.hung { return }
                cycles += outcome.cycleCount
                print("stress cycles: \(StressTests.describe(outcome.statistics))")
            }
            #expect(cycles > 0, "stress seed \(seed): no back edge closed a cycle")
        }

        /// Operations ended because they are on a dependency cycle are finished, and once nobody
        /// references them they are released like any finished operation.
        @Test func operationsEndedOnADependencyCycleAreReleased() {
            let token = uniqueToken("stress")
            _ = DiagnosticsRecorder.shared
            let queue = OpQueue()
            let references = (WeakOpBox(), WeakOpBox(), WeakOpBox())
            do {
                let before = BlockOp {}
                let a = BlockOp { Issue.record("an operation on a cycle ran") }
                let b = BlockOp { Issue.record("an operation on a cycle ran") }
                a.name = "\(token).a"
                b.name = "\(token).b"
                a.addDependency(before)
                references.0.set(a)
                references.1.set(b)
                references.2.set(before)
                queue.isSuspended = true
                queue.addOperations([before, a, b], waitUntilFinished: false)
                b.addDependency(a)
                a.addDependency(b)
                queue.isSuspended = false
                #expect(queueEmpties(queue))
                #expect(a.error is DependencyCycleError && b.error is DependencyCycleError)
                #expect(DiagnosticsRecorder.shared.cyclesEnded(mentioning: token).count == 1)
            }
            #expect(eventually { references.0.operation == nil }, "the first operation of the cycle is never released")
            #expect(eventually { references.1.operation == nil }, "the second operation of the cycle is never released")
            #expect(eventually { references.2.operation == nil }, "the dependency of the cycle is never released")
        }

        /// A loop of dependencies closed through an operation that is already cancelled blocks
        /// nothing (the cancelled operation ignores its dependencies), so it is not a cycle to end;
        /// once its operations are finished, they are released.
        @Test func aLoopClosedThroughACancelledOperationIsReleased() {
            let token = uniqueToken("stress")
            _ = DiagnosticsRecorder.shared
            let queue = OpQueue()
            queue.isSuspended = true
            let references = (WeakOpBox(), WeakOpBox(), WeakOpBox())
            do {
                let cancelled = BlockOp { Issue.record("a cancelled operation ran") }
                let partner = BlockOp {}
                let looped = BlockOp {}
                cancelled.name = "\(token).cancelled"
                partner.name = "\(token).partner"
                looped.name = "\(token).looped"
                references.0.set(cancelled)
                references.1.set(partner)
                references.2.set(looped)
                queue.addOperations([cancelled, partner, looped], waitUntilFinished: false)
                cancelled.cancel()
                partner.addDependency(cancelled)
                cancelled.addDependency(partner)
                // A loop through the cancelled operation: looped waits for it, it waits for nothing.
                looped.addDependency(cancelled)
                cancelled.addDependency(looped)
                #expect(DiagnosticsRecorder.shared.reports(mentioning: token).isEmpty)
                queue.isSuspended = false
                #expect(queueEmpties(queue))
                #expect(looped.error == nil && !looped.isCancelled && partner.error == nil && !partner.isCancelled)
            }
            #expect(eventually { references.0.operation == nil }, "the cancelled operation is never released")
            #expect(eventually { references.1.operation == nil }, "the operation looped through it first is never released")
            #expect(eventually { references.2.operation == nil }, "the operation looped through it last is never released")
        }

        /// An operation already ended by one cycle, and still held behind a barrier, can be on a
        /// second cycle through that barrier; ending the second cycle does not replace the error
        /// the operation was ended with.
        @Test
        func anOperationOnTwoCyclesKeepsTheErrorOfTheFirst() {
            let token = uniqueToken("stress")
            _ = DiagnosticsRecorder.shared
            let queue = OpQueue(), other = OpQueue()
            queue.isSuspended = true
            other.isSuspended = true
            let shared = BlockOp { Issue.record("an operation on a cycle ran") }
            let partner = BlockOp { Issue.record("an operation on a cycle ran") }
            let member = BlockOp {}
            let bridge = BlockOp {}
            for (operation, name) in [(shared, "shared"), (partner, "partner"), (member, "member"), (bridge, "bridge")] {
                operation.name = "\(token).\(name)"
            }
            queue.addOperation(member)
            queue.addBarrierBlock {}
            queue.addOperation(shared)
            other.addOperations([partner, bridge], waitUntilFinished: false)
            // First cycle: shared ⇄ partner, ended by a wait (the wait itself goes on until the
            // queues run).
            partner.addDependency(shared)
            shared.addDependency(partner)
            DispatchQueue.global().async { partner.waitUntilFinished() }
            // Ending a cycle records its error on one operation after another.
            #expect(eventually { shared.error != nil && partner.error != nil })
            let first = shared.error as? DependencyCycleError
            #expect(first != nil && partner.error as? DependencyCycleError == first)
            // Second cycle, through the barrier that holds the (cancelled) shared operation back:
            // shared → barrier → member → bridge → shared. Waiting for the queues ends it.
            bridge.addDependency(shared)
            member.addDependency(bridge)
            queue.isSuspended = false
            other.isSuspended = false
            guard queueEmpties(queue), queueEmpties(other) else {
                Issue.record("the second cycle was not ended")
                queue.cancelAllOperations()
                other.cancelAllOperations()
                return
            }
            #expect(member.error is DependencyCycleError && bridge.error is DependencyCycleError)
            #expect(shared.error as? DependencyCycleError == first, "the error of the first cycle was replaced by \(String(describing: shared.error))")
            #expect(DiagnosticsRecorder.shared.cyclesEnded(mentioning: token).count == 2)
        }

        /// A cycle that goes through barriers of two queues is found by the stalled queues and
        /// ended once it has stayed unbroken for the grace period (nobody waits for it).
        @Test
        func aCycleThroughBarriersOfTwoQueuesIsEndedAfterTheGracePeriod() {
            let token = uniqueToken("stress")
            _ = DiagnosticsRecorder.shared
            let left = OpQueue(), right = OpQueue()
            left.isSuspended = true
            right.isSuspended = true
            let a = BlockOp { Issue.record("an operation on a cycle ran") }
            let c = BlockOp { Issue.record("an operation on a cycle ran") }
            let d = BlockOp { Issue.record("an operation on a cycle ran") }
            let e = BlockOp { Issue.record("an operation on a cycle ran") }
            for (operation, name) in [(a, "a"), (c, "c"), (d, "d"), (e, "e")] {
                operation.name = "\(token).\(name)"
            }
            left.addOperation(a)
            left.addBarrierBlock {}
            left.addOperation(c)
            right.addOperation(d)
            right.addBarrierBlock {}
            right.addOperation(e)
            // a → e → right's barrier → d → c → left's barrier → a.
            a.addDependency(e)
            d.addDependency(c)
            left.isSuspended = false
            right.isSuspended = false
            guard eventually(seconds: 10, { [a, c, d, e].allSatisfy(\.isFinished) }) else {
                Issue.record("the cycle a → e → barrier → d → c → barrier → a was not ended")
                left.cancelAllOperations()
                right.cancelAllOperations()
                return
            }
            #expect([a, c, d, e].allSatisfy { $0.error is DependencyCycleError })
            #expect(DiagnosticsRecorder.shared.cyclesFound(mentioning: token).count == 1)
            #expect(DiagnosticsRecorder.shared.cyclesEnded(mentioning: token).count == 1)
        }

        /// A cycle that goes through two barriers added one after the other (an empty epoch) is
        /// found by the stalled queue like any other, and ended by a wait.
        @Test
        func aCycleThroughTwoAdjacentBarriersIsEnded() {
            let token = uniqueToken("stress")
            _ = DiagnosticsRecorder.shared
            let queue = OpQueue()
            queue.isSuspended = true
            let first = BlockOp { Issue.record("an operation on a cycle ran") }
            let last = BlockOp { Issue.record("an operation on a cycle ran") }
            first.name = "\(token).first"
            last.name = "\(token).last"
            queue.addOperation(first)
            queue.addBarrierBlock {}
            queue.addBarrierBlock {}
            queue.addOperation(last)
            // first → last → second barrier → first barrier → first.
            first.addDependency(last)
            queue.isSuspended = false
            #expect(eventually { DiagnosticsRecorder.shared.cyclesFound(mentioning: token).count == 1 })
            guard queueEmpties(queue) else {
                Issue.record("the queue never empties: the cycle first → last → barrier → barrier → first was not ended")
                queue.cancelAllOperations()
                return
            }
            #expect(first.error is DependencyCycleError && last.error is DependencyCycleError)
            #expect(DiagnosticsRecorder.shared.cyclesEnded(mentioning: token).count == 1)
        }
    }
}
