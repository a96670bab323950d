import Testing
import Dispatch
import Foundation
@testable import Operations

/// Limited operations over several queues while other threads cancel some of them, suspend and
/// resume a queue and start some by hand: the limit always holds, every operation finishes once
/// (it ran, or was cancelled without running), and every permit comes back.
@Suite struct LimitStressTests {
    @Test func theLimitHoldsAndEveryPermitComesBackUnderCancellationsAndSuspensions() async {
        let seed = StressEnvironment.seed()
        let scale = Int(ProcessInfo.processInfo.environment["OPERATIONS_LIMIT_STRESS_SCALE"] ?? "") ?? 1
        let count = 600 * scale
        let category = uniqueToken("stress")
        let exclusiveCategory = uniqueToken("stress-x")
        let limit = OpCondition.limited(category, permits: 3)
        let meter = ConcurrencyMeter()
        let exclusiveMeter = ConcurrencyMeter()
        let ran = LockedBox(0)
        let queues = (0..<4).map { index in
            let queue = OpQueue()
            queue.maxConcurrentOperationCount = index == 0 ? 1 : (index == 1 ? 2 : OpQueue.defaultMaxConcurrentOperationCount)
            return queue
        }
        let result: (ops: [Op], manual: [Op]) = await onOwnThread {
            var random = SplitMix64(seed: seed)
            var ops: [Op] = []
            var manual: [Op] = []
            for index in 0..<count {
                let exclusive = index % 7 == 0
                let op = BlockOp {
                    meter.enter()
                    if exclusive { exclusiveMeter.enter() }
                    if index % 5 == 0 { blockThread(milliseconds: 1) }
                    if exclusive { exclusiveMeter.leave() }
                    meter.leave()
                    ran.withLockedValue { $0 += 1 }
                }
                op.addCondition(exclusive ? .all([limit, .mutuallyExclusive(exclusiveCategory)]) : limit)
                if index % 50 == 49 {
                    manual.append(op)
                } else {
                    ops.append(op)
                }
            }
            let group = DispatchGroup()
            for op in manual {
                group.enter()
                Thread {
                    op.start()
                    group.leave()
                }.start()
            }
            for (index, op) in ops.enumerated() {
                queues[Int(random.next() % 4)].addOperation(op)
                if random.next() % 10 == 0 {
                    ops[Int(random.next() % UInt64(index + 1))].cancel()
                }
                if index % 97 == 0 {
                    queues[3].isSuspended.toggle()
                }
                if random.next() % 30 == 0 { manual[Int(random.next() % UInt64(manual.count))].cancel() }
            }
            queues[3].isSuspended = false
            group.wait()
            return (ops, manual)
        }
        #expect(await eventuallyAsync(seconds: 60) { queues.allSatisfy { $0.operationCount == 0 } }, "seed \(seed)")
        let all = result.ops + result.manual
        let allFinished = all.allSatisfy { $0.isFinished }
        let stuck = all.enumerated().filter { !$0.element.isFinished }.map { index, op in
            let manual = index >= result.ops.count
            return "\(manual ? "manual" : "queued") \(op): " + op.withState { machine in
                "gate \(machine.gate), lifecycle \(machine.lifecycle), cancelled \(machine.isCancelled), scheduled \(machine.isScheduled), ready \(machine.isReady)"
            } + ", holds exclusive \(Exclusivity.holders(of: exclusiveCategory).contains { $0 === op })"
        }
        #expect(allFinished, "seed \(seed): \(stuck.prefix(5)), waiting for a permit: \(Exclusivity.waitingForPermit(in: category).count), permits in use: \(Exclusivity.permitsInUse(of: category)), exclusive waiting: \(Exclusivity.waiting(in: exclusiveCategory).count)")
        let cancelledWithoutRunning = all.filter { $0.isCancelled && !$0.isExecuting }.count
        let runs = ran.withLockedValue { $0 }
        #expect(runs + cancelledWithoutRunning >= all.count, "seed \(seed)")
        #expect(runs <= all.count, "seed \(seed)")
        #expect(meter.peak <= 3, "seed \(seed)")
        #expect(exclusiveMeter.peak <= 1, "seed \(seed)")
        #expect(await eventuallyAsync { Exclusivity.permitsInUse(of: category) == 0 }, "seed \(seed)")
        #expect(!Exclusivity.keepsCountedCategory(category), "seed \(seed)")
        #expect(Exclusivity.holders(of: exclusiveCategory).isEmpty, "seed \(seed)")
    }
}
