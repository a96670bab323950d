import Testing
import Dispatch
@testable import Operations

/// A dependency added to an operation that is ready in its queue, past its conditions (or
/// evaluating them, or waiting for its exclusivity categories), closes its gate again: its
/// ready-list entry is withdrawn, what it asked of the exclusivity table is given back, and its
/// conditions are evaluated again once the dependencies have finished (issue 22, defect 15).
@Suite struct LateDependencyClosesTheGateTests {
    private struct Failure: Error {}

    private func exclusive(_ category: String, _ block: @escaping @Sendable () -> Void = {}) -> BlockOp {
        let op = BlockOp(block: block)
        op.addCondition(.mutuallyExclusive(category))
        return op
    }

    private func holders(_ category: String) -> [ObjectIdentifier] {
        Exclusivity.holders(of: category).map(ObjectIdentifier.init)
    }

    private func gate(of op: Op) -> OpStateMachine.Gate {
        op.withState { $0.gate }
    }

    private func isScheduled(_ op: Op) -> Bool {
        op.withState { $0.isScheduled }
    }

    private func drains(_ queue: OpQueue, seconds: Double = 10) -> Bool {
        eventually(seconds: seconds) { queue.operationCount == 0 }
    }

    /// A serial queue whose only slot is taken until the returned gate is opened.
    private func busySerialQueue() -> (OpQueue, Gate) {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let started = Gate()
        let busy = Gate()
        queue.addOperation {
            started.open()
            busy.wait()
        }
        started.wait()
        return (queue, busy)
    }

    @Test func aLateDependencyGivesBackTheCategoryAndTheOperationNeverWaitsForItself() {
        let category = uniqueToken("late")
        let log = EventLog<String>()
        let (serial, busy) = busySerialQueue()
        let late = exclusive(category) { log.append("late") }
        serial.addOperation(late)
        let dependencyRuns = Gate()
        let dependencyStarted = Gate()
        let dependency = BlockOp {
            dependencyStarted.open()
            dependencyRuns.wait()
        }
        late.addDependency(dependency)
        let other = OpQueue()
        other.addOperation(dependency)
        #expect(dependencyStarted.wait())
        // The serial queue's slot is free while the dependency runs: whatever entry `late` had
        // on the ready list is taken now.
        busy.open()
        #expect(eventually(seconds: 5) { serial.operationCount == 1 && !isScheduled(late) })
        dependencyRuns.open()
        let rival = exclusive(category) { log.append("rival") }
        other.addOperation(rival)
        let finished = eventually(seconds: 5) { late.isFinished && rival.isFinished }
        #expect(finished, "the category is held by \(Exclusivity.holders(of: category))")
        if !finished {
            late.cancel()
            rival.cancel()
        }
        #expect(drains(serial))
        #expect(drains(other))
        #expect(Set(log.all) == ["late", "rival"])
        #expect(holders(category).isEmpty)
    }

    @Test func aLateFailedDependencyIsCheckedByNoFailedDependencies() {
        let log = EventLog<String>()
        let (serial, busy) = busySerialQueue()
        let checked = BlockOp { log.append("ran") }
        checked.addCondition(.noFailedDependencies)
        serial.addOperation(checked)
        // Passed its conditions (it had no dependency), it waits for the slot; now it gets one
        // that fails, and finishes before the slot is free.
        let failing = BlockOp {}
        checked.addDependency(failing)
        failing.cancel(with: Failure())
        failing.start()
        busy.open()
        #expect(drains(serial))
        #expect(log.all.isEmpty, "it ran without its conditions being evaluated again")
        #expect(checked.isCancelled)
        #expect((checked.error as? ConditionFailedError)?.condition == "noFailedDependencies")
    }

    @Test func aLateDependencyDuringAnAsyncEvaluationHasTheConditionsEvaluatedAgain() async {
        let evaluations = EventLog<Int>()
        let evaluating = Gate()
        let verdict = Gate()
        let ranAfter = EventLog<Int>()
        let op = BlockOp { ranAfter.append(evaluations.count) }
        op.addCondition(.evaluate("twice") { _ in
            evaluations.append(evaluations.count)
            if evaluations.count == 1 {
                evaluating.open()
                _ = await verdict.waitOffThread()
            }
            return true
        })
        let queue = OpQueue()
        queue.addOperation(op)
        #expect(await evaluating.waitOffThread())
        let dependency = BlockOp {}
        op.addDependency(dependency)
        verdict.open()
        // The verdict of the first evaluation came before the dependency finished: it counts
        // for nothing.
        try? await Task.sleep(for: .milliseconds(50))
        #expect(!op.isExecuting && !op.isFinished)
        dependency.start()
        await op.waitUntilFinished()
        #expect(ranAfter.all == [2], "it ran after \(ranAfter.all) evaluations")
    }

    @Test func aLateDependencyWithdrawsAWaitingRequestSoTheNextOneGoes() {
        let category = uniqueToken("withdraw")
        let log = EventLog<String>()
        let holderStarted = Gate()
        let release = Gate()
        let holder = exclusive(category) {
            holderStarted.open()
            release.wait()
            log.append("holder")
        }
        let queue = OpQueue()
        queue.addOperation(holder)
        #expect(holderStarted.wait())
        let first = exclusive(category) { log.append("first") }
        queue.addOperation(first)
        #expect(eventually(seconds: 5) { waitsForItsCategory(first) })
        let second = exclusive(category) { log.append("second") }
        queue.addOperation(second)
        #expect(eventually(seconds: 5) { waitsForItsCategory(second) })
        let dependency = BlockOp {}
        first.addDependency(dependency)
        release.open()
        let secondRan = eventually(seconds: 5) { second.isFinished }
        #expect(secondRan, "the operation that got a dependency keeps the category reserved or held")
        dependency.start()
        #expect(drains(queue))
        #expect(log.all == ["holder", "second", "first"])
        #expect(holders(category).isEmpty)
    }

    @Test func aLateDependencyTakesAReadyOperationOffTheReadyList() {
        let log = EventLog<String>()
        let (serial, busy) = busySerialQueue()
        let ready = BlockOp { log.append("ready") }
        serial.addOperation(ready)
        #expect(isScheduled(ready))
        let dependencyRuns = Gate()
        let dependency = BlockOp {
            dependencyRuns.wait()
            log.append("dependency")
        }
        ready.addDependency(dependency)
        #expect(!isScheduled(ready), "its ready-list entry still counts")
        #expect(!ready.isReady)
        OpQueue().addOperation(dependency)
        busy.open()
        dependencyRuns.open()
        #expect(drains(serial))
        #expect(log.all == ["dependency", "ready"])
    }
}
