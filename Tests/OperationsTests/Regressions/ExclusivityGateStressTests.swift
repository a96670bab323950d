import Testing
import Dispatch
import Foundation
@testable import Operations

/// Exclusive operations in queues that are suspended and resumed, that get dependencies after
/// their conditions passed, and that are cancelled while they wait, in random order (seeded):
/// every one finishes, no two of a category ever run at once, and nothing holds a category at the
/// end (issue 22, defects 9, 15 and 18 together).
@Suite struct ExclusivityGateStressTests {
    private final class WeakBox: @unchecked Sendable {
        // @unchecked Sendable: written once before it is shared; reading a weak reference is safe.
        weak var object: Op?
    }

    /// A small seeded generator (SplitMix64), so that a failure can be replayed.
    private struct Random {
        var state: UInt64

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }

        mutating func below(_ bound: Int) -> Int {
            Int(next() % UInt64(bound))
        }

        mutating func chance(_ percent: Int) -> Bool {
            below(100) < percent
        }
    }

    @Test func exclusiveOperationsFinishWithoutOverlapThroughSuspensionsLateDependenciesAndCancellations() async {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["OPERATIONS_STRESS_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0 ... .max)
        let rounds = environment["OPERATIONS_GATE_STRESS_ROUNDS"].flatMap(Int.init) ?? 12
        let failures = await onOwnThread { Self.run(seed: seed, rounds: rounds, operationsPerRound: 80) }
        #expect(failures.isEmpty, "seed \(seed): \(failures)")
    }

    private static func run(seed: UInt64, rounds: Int, operationsPerRound: Int) -> [String] {
        var random = Random(state: seed)
        var failures: [String] = []
        let categories = (0..<3).map { uniqueToken("stress\($0)") }
        let meters = categories.map { _ in ConcurrencyMeter() }
        let queues = (0..<4).map { index -> OpQueue in
            let queue = OpQueue()
            queue.maxConcurrentOperationCount = index == 0 ? 1 : index == 1 ? 2 : OpQueue.defaultMaxConcurrentOperationCount
            return queue
        }
        for round in 0..<rounds {
            var operations: [Op] = []
            for index in 0..<operationsPerRound {
                var chosen: [Int] = []
                for category in categories.indices where random.chance(35) { chosen.append(category) }
                let mine = chosen
                let name = "r\(round)-\(index)"
                let me = WeakBox()
                let op = BlockOp {
                    // Whether the table lists it as a holder of each of its categories (a
                    // diagnostic: an overlap says which side went wrong).
                    let held = mine.map { category in
                        Exclusivity.holders(of: categories[category]).contains { $0 === me.object }
                    }
                    let tag = "\(name)\(held.allSatisfy { $0 } ? "" : " (not a holder: \(mine) \(held))")"
                    for category in mine { meters[category].enter(tag) }
                    blockThread(milliseconds: 0)
                    for category in mine { meters[category].leave(tag) }
                }
                me.object = op
                op.name = name
                for category in mine { op.addCondition(.mutuallyExclusive(categories[category])) }
                if random.chance(20) { op.addCondition(.noFailedDependencies) }
                if random.chance(10) {
                    op.addCondition(.evaluate("yields") { _ in
                        await Task.yield()
                        return true
                    })
                }
                // Edges only go to earlier operations: no cycle.
                if !operations.isEmpty && random.chance(25) {
                    op.addDependency(operations[random.below(operations.count)])
                }
                operations.append(op)
            }
            for op in operations {
                queues[random.below(queues.count)].addOperation(op)
                switch random.below(100) {
                case ..<6:
                    queues[random.below(queues.count)].isSuspended = true
                case ..<14:
                    queues[random.below(queues.count)].isSuspended = false
                case ..<26:
                    // A late dependency, to an earlier operation: it may have passed its
                    // conditions, be waiting for its categories, or have started.
                    let later = operations[random.below(operations.count)]
                    let earlierIndex = operations.firstIndex { $0 === later }!
                    if earlierIndex > 0 {
                        later.addDependency(operations[random.below(earlierIndex)])
                    }
                case ..<30:
                    operations[random.below(operations.count)].cancel()
                default:
                    break
                }
            }
            for queue in queues { queue.isSuspended = false }
            let finished = eventually(seconds: 30) { operations.allSatisfy(\.isFinished) }
            if finished {
                // Nothing keeps them once they finished: neither the table nor its lines.
                let weak = operations.map { operation -> WeakBox in
                    let box = WeakBox()
                    box.object = operation
                    return box
                }
                operations = []
                if !eventually(seconds: 10, { weak.allSatisfy { $0.object == nil } }) {
                    let kept = weak.compactMap(\.object)
                    failures.append("round \(round): \(kept.count) finished operations not released, the first \(kept[0].description)")
                    break
                }
            }
            if !finished {
                let stuck = operations.filter { !$0.isFinished }
                failures.append("round \(round): \(stuck.count) operations never finished, the first \(stuck.first!.description)")
                for queue in queues { print(queue.dump()) }
                // What each stuck one's state machine says (gate, attempt...), and whether the
                // table knows of a request of it.
                for op in stuck {
                    let state = op.withState { machine in
                        "gate \(machine.gate) scheduled \(machine.isScheduled) ready \(machine.isReady) cancelled \(machine.isCancelled) ticket \(machine.ticket) attempt \(machine.extras?.exclusivityAttempt ?? 0) generation \(machine.extras?.gateGeneration ?? 0) waits \(Exclusivity.blockers(of: op).map { "\($0.count)" } ?? "no")"
                    }
                    print("STUCK \(op.name ?? "") \(state)")
                }
                for op in stuck { op.cancel() }
                _ = eventually(seconds: 10) { operations.allSatisfy(\.isFinished) }
                break
            }
        }
        for (index, meter) in meters.enumerated() where meter.peak > 1 {
            failures.append("category \(index) was held by \(meter.peak) operations at once: \(meter.overlaps)")
        }
        for category in categories where !Exclusivity.holders(of: category).isEmpty {
            failures.append("\(category) is still held by \(Exclusivity.holders(of: category))")
        }
        return failures
    }
}
