import Testing
import Dispatch
@testable import Operations

/// An error to fail operations and conditions with, told apart by `id`.
private struct Boom: Error, Equatable {
    let id: Int
}

/// A callback-style operation that fails with `failure` as soon as it starts (no Swift task).
private final class FailingOp: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: `failure` is immutable.
    let failure: Boom

    init(_ failure: Boom) {
        self.failure = failure
        super.init()
    }

    override func execute() {
        finish(throwing: failure)
    }
}

/// An async one-shot gate: `wait()` suspends (holding no thread) until `open()`; `arrived` counts
/// the callers of `wait()`.
private actor AsyncLatch {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private(set) var arrived = 0

    func wait() async {
        arrived += 1
        guard !isOpen else { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        isOpen = true
        let waiting = waiters
        waiters = []
        for waiter in waiting { waiter.resume() }
    }
}

/// A marker object stored in a thread-local slot, to tell which thread code runs on.
private final class ThreadMarker: Sendable {}

/// The condition failure of `op`, if its error is one.
private func failure(of op: Op) -> ConditionFailedError? {
    op.error as? ConditionFailedError
}

/// Waits, polling on this thread, until `queue` is empty; `false` after `seconds` (a hang guard).
/// (Unlike `queueEmpties`, it needs no Dispatch thread: Linux adds those only about once a
/// second when tests running in parallel block them all.)
private func drains(_ queue: OpQueue, seconds: Double = 10) -> Bool {
    eventually(seconds: seconds) { queue.operationCount == 0 }
}

@Suite struct ConditionTests {
    // MARK: Predicates

    @Test func passingPredicateLetsTheOperationRun() {
        let ran = EventLog<String>()
        let op = BlockOp { ran.append("body") }
        op.addCondition(.predicate("always") { _ in true })
        OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(ran.all == ["body"])
        #expect(op.isFinished && !op.isCancelled)
        #expect(op.error == nil)
    }

    @Test func failingPredicateCancelsTheOperationWithoutRunningIt() {
        let ran = EventLog<String>()
        let op = BlockOp { ran.append("body") }
        op.addCondition(.predicate("is allowed") { _ in false })
        OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(ran.count == 0)
        #expect(op.isFinished && op.isCancelled)
        let error = failure(of: op)
        #expect(error?.condition == "is allowed")
        #expect(error?.underlyingError == nil)
        #expect(error?.description == "The condition is allowed failed")
    }

    @Test func predicateIsGivenTheOperation() {
        let seen = EventLog<ObjectIdentifier>()
        let op = BlockOp {}
        op.addCondition(.predicate("records") { seen.append(ObjectIdentifier($0)); return true })
        OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(seen.all == [ObjectIdentifier(op)])
    }

    @Test func dependentsOfAnOperationWhoseConditionFailedStillRun() {
        let log = EventLog<String>()
        let a = BlockOp { log.append("a") }
        a.addCondition(.predicate("no") { _ in false })
        let b = BlockOp { log.append("b") }
        b.addDependency(a)
        OpQueue().addOperations([b, a], waitUntilFinished: true)
        #expect(log.all == ["b"])
        #expect(a.isCancelled && !b.isCancelled)
        #expect(b.isFinished)
    }

    @Test func failureIsSeenByObserversAsCancellationAndError() {
        let log = EventLog<String>()
        let op = BlockOp {}
        op.addCondition(.predicate("observed") { _ in false })
        let cancelled = op.observe(\.isCancelled, options: [.old, .new]) { _, change in
            log.append("isCancelled \(change.oldValue == true)→\(change.newValue == true)")
        }
        let errors = op.observe(\.error, options: [.new]) { _, change in
            let error: (any Error)? = change.newValue ?? nil
            log.append("error \((error as? ConditionFailedError)?.condition ?? "other")")
        }
        OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(op.isCancelled)
        #expect(log.all.contains("isCancelled false→true"))
        #expect(log.all.contains("error observed"))
        cancelled.invalidate()
        errors.invalidate()
    }

    @Test func cancelledOperationSkipsItsConditions() {
        let evaluated = EventLog<String>()
        let op = BlockOp {}
        op.addCondition(.predicate("p") { _ in evaluated.append("p"); return true })
        op.cancel()
        OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(evaluated.count == 0)
        #expect(op.isFinished && op.isCancelled)
        #expect(op.error == nil)
    }

    // MARK: When conditions are evaluated

    @Test func conditionsAreEvaluatedOnlyAfterEveryDependencyFinished() {
        let observations = EventLog<[Bool]>()
        let queue = OpQueue()
        let other = OpQueue()
        let fast = BlockOp {}
        let slow = BlockOp { blockThread(milliseconds: 20) }
        let op = BlockOp {}
        op.addDependency(fast)
        op.addDependency(slow)
        op.addCondition(.predicate("records") { op in
            observations.append(op.dependencies.map(\.isFinished))
            return true
        })
        queue.addOperation(op)
        queue.addOperation(fast)
        other.addOperation(slow)
        op.waitUntilFinished()
        #expect(observations.all == [[true, true]])
        #expect(!op.isCancelled)
    }

    @Test func conditionsAreEvaluatedInTheOrderTheyWereAdded() {
        let log = EventLog<String>()
        let op = BlockOp { log.append("body") }
        for name in ["first", "second", "third"] {
            op.addCondition(.predicate(name) { _ in log.append(name); return true })
        }
        OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(log.all == ["first", "second", "third", "body"])
    }

    @Test func evaluationStopsAtTheFirstFailure() {
        let log = EventLog<String>()
        let op = BlockOp { log.append("body") }
        op.addCondition(.predicate("pass") { _ in log.append("pass"); return true })
        op.addCondition(.predicate("fail") { _ in log.append("fail"); return false })
        op.addCondition(.predicate("later") { _ in log.append("later"); return true })
        OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(log.all == ["pass", "fail"])
        #expect(failure(of: op)?.condition == "fail")
    }

    // MARK: Async conditions

    @Test func asyncConditionThatReturnsTrueLetsTheOperationRun() async {
        let observations = EventLog<Bool>()
        let ran = EventLog<String>()
        let dependency = BlockOp { blockThread(milliseconds: 5) }
        let op = BlockOp { ran.append("body") }
        op.addDependency(dependency)
        op.addCondition(.evaluate("async yes") { op in
            observations.append(op.dependencies.allSatisfy(\.isFinished))
            await Task.yield()
            return true
        })
        let queue = OpQueue()
        queue.addOperation(op)
        queue.addOperation(dependency)
        await queue.waitUntilAllOperationsAreFinished()
        #expect(observations.all == [true])
        #expect(ran.all == ["body"])
        #expect(!op.isCancelled && op.error == nil)
    }

    @Test func asyncConditionThatReturnsFalseFails() async {
        let ran = EventLog<String>()
        let op = BlockOp { ran.append("body") }
        op.addCondition(.evaluate("async no") { _ in
            await Task.yield()
            return false
        })
        OpQueue().addOperation(op)
        await op.waitUntilFinished()
        #expect(ran.count == 0)
        #expect(op.isCancelled)
        #expect(failure(of: op)?.condition == "async no")
        #expect(failure(of: op)?.underlyingError == nil)
    }

    @Test func asyncConditionThatThrowsFailsWithTheThrownError() async {
        let ran = EventLog<String>()
        let op = BlockOp { ran.append("body") }
        op.addCondition(.evaluate("async throws") { _ in
            await Task.yield()
            throw Boom(id: 7)
        })
        OpQueue().addOperation(op)
        await op.waitUntilFinished()
        #expect(ran.count == 0)
        #expect(op.isCancelled)
        #expect(failure(of: op)?.condition == "async throws")
        #expect(failure(of: op)?.underlyingError as? Boom == Boom(id: 7))
    }

    @Test func syncAndAsyncConditionsAreEvaluatedInOrder() async {
        let log = EventLog<String>()
        let op = BlockOp { log.append("body") }
        op.addCondition(.predicate("sync 1") { _ in log.append("sync 1"); return true })
        op.addCondition(.evaluate("async") { _ in
            await Task.yield()
            log.append("async")
            return true
        })
        op.addCondition(.predicate("sync 2") { _ in log.append("sync 2"); return true })
        OpQueue().addOperation(op)
        await op.waitUntilFinished()
        #expect(log.all == ["sync 1", "async", "sync 2", "body"])
    }

    @Test func asyncConditionsHoldNoThreadWhileTheyWait() async {
        // Fifty operations of a width-1 queue all evaluate their conditions at once (before taking
        // a slot), each suspended on the latch: if they held threads, the other work below (a
        // plain operation, and an async condition and body that need the cooperative pool)
        // could not run.
        let latch = AsyncLatch()
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let meter = ConcurrencyMeter()
        let operations = (0..<50).map { _ in
            let op = BlockOp {
                meter.enter()
                meter.leave()
            }
            op.addCondition(.evaluate("latched") { _ in
                await latch.wait()
                return true
            })
            return op
        }
        for op in operations { queue.addOperation(op) }
        #expect(await eventuallyAsync { await latch.arrived == 50 })
        #expect(meter.total == 0)

        let otherQueue = OpQueue()
        let plain = BlockOp {}
        otherQueue.addOperation(plain)
        let asyncWork = AsyncOp { await Task.yield() }
        asyncWork.addCondition(.evaluate("quick") { _ in
            await Task.yield()
            return true
        })
        otherQueue.addOperation(asyncWork)
        #expect(await eventuallyAsync { plain.isFinished && asyncWork.isFinished })
        #expect(meter.total == 0)

        await latch.open()
        #expect(await eventuallyAsync { queue.operationCount == 0 })
        #expect(meter.total == 50)
        #expect(meter.peak == 1)
        #expect(operations.allSatisfy { $0.isFinished && !$0.isCancelled })
    }

    @Test func cancellingDuringAsyncEvaluationFinishesWithoutRunning() async {
        let latch = AsyncLatch()
        let ran = EventLog<String>()
        let queue = OpQueue()
        let op = BlockOp { ran.append("body") }
        op.addCondition(.evaluate("slow") { _ in
            await latch.wait()
            return true
        })
        queue.addOperation(op)
        #expect(await eventuallyAsync { await latch.arrived == 1 })
        op.cancel()
        // Finishes while the condition is still suspended.
        #expect(await eventuallyAsync { op.isFinished })
        #expect(ran.count == 0)
        #expect(op.isCancelled)
        #expect(op.error == nil)
        // The late result is ignored, and nothing hangs.
        await latch.open()
        #expect(await eventuallyAsync { queue.operationCount == 0 })
        try? await Task.sleep(for: .milliseconds(5))
        #expect(ran.count == 0)
    }

    @Test func asyncConditionOfAnAsyncOperation() async {
        let op = AsyncBlockOp<Int> {
            await Task.yield()
            return 42
        }
        op.addCondition(.evaluate("ok") { _ in true })
        let queue = OpQueue()
        queue.addOperation(op)
        let value = try? await op.value
        #expect(value == 42)
    }

    // MARK: Dependency conditions

    @Test func noFailedDependenciesFailsWithTheDependencysError() {
        let ran = EventLog<String>()
        let failed = FailingOp(Boom(id: 1))
        let fine = BlockOp {}
        let op = BlockOp { ran.append("body") }
        op.addDependency(fine)
        op.addDependency(failed)
        op.addCondition(.noFailedDependencies)
        OpQueue().addOperations([fine, failed, op], waitUntilFinished: true)
        #expect(failed.error as? Boom == Boom(id: 1))
        #expect(ran.count == 0)
        #expect(op.isCancelled)
        #expect(failure(of: op)?.condition == "noFailedDependencies")
        #expect(failure(of: op)?.underlyingError as? Boom == Boom(id: 1))
    }

    @Test func noFailedDependenciesPassesWhenNoDependencyFailed() {
        let ran = EventLog<String>()
        let cancelled = BlockOp {}
        cancelled.cancel()
        let op = BlockOp { ran.append("body") }
        op.addDependency(BlockOp {}.started())
        op.addDependency(cancelled)
        op.addCondition(.noFailedDependencies)
        OpQueue().addOperations([cancelled, op], waitUntilFinished: true)
        #expect(ran.all == ["body"])
        #expect(op.error == nil && !op.isCancelled)
    }

    @Test func conditionFailuresPropagateThroughNoFailedDependencies() {
        let first = BlockOp {}
        first.addCondition(.predicate("first check") { _ in false })
        let second = BlockOp {}
        second.addDependency(first)
        second.addCondition(.noFailedDependencies)
        OpQueue().addOperations([first, second], waitUntilFinished: true)
        #expect(second.isCancelled)
        let underlying = failure(of: second)?.underlyingError as? ConditionFailedError
        #expect(underlying?.condition == "first check")
    }

    @Test func noCancelledDependenciesFailsWhenADependencyWasCancelled() {
        let ran = EventLog<String>()
        let cancelled = BlockOp {}
        cancelled.cancel()
        let op = BlockOp { ran.append("body") }
        op.addDependency(cancelled)
        op.addCondition(.noCancelledDependencies)
        OpQueue().addOperations([cancelled, op], waitUntilFinished: true)
        #expect(ran.count == 0)
        #expect(op.isCancelled)
        #expect(failure(of: op)?.condition == "noCancelledDependencies")
        #expect(failure(of: op)?.underlyingError == nil)
    }

    @Test func noCancelledDependenciesPassesWhenNoneWasCancelled() {
        let ran = EventLog<String>()
        let dependency = BlockOp {}
        let op = BlockOp { ran.append("body") }
        op.addDependency(dependency)
        op.addCondition(.noCancelledDependencies)
        OpQueue().addOperations([dependency, op], waitUntilFinished: true)
        #expect(ran.all == ["body"])
        #expect(!op.isCancelled)
    }

    // MARK: Combinators

    @Test func allReportsTheFirstFailureByTheInnerConditionsName() {
        let log = EventLog<String>()
        let op = BlockOp { log.append("body") }
        op.addCondition(.all([
            .predicate("p") { _ in log.append("p"); return true },
            .predicate("q") { _ in log.append("q"); return false },
            .predicate("r") { _ in log.append("r"); return false },
        ]))
        #expect(op.conditions.map(\.name) == ["all(p, q, r)"])
        OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(log.all == ["p", "q"])
        #expect(op.isCancelled)
        #expect(failure(of: op)?.condition == "q")
    }

    @Test func allPassesWhenEveryMemberPasses() {
        let log = EventLog<String>()
        let op = BlockOp { log.append("body") }
        op.addCondition(.all([
            .predicate("p") { _ in log.append("p"); return true },
            .predicate("q") { _ in log.append("q"); return true },
        ]))
        OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(log.all == ["p", "q", "body"])
    }

    @Test func anyPassesWhenOneMemberPasses() {
        let log = EventLog<String>()
        let op = BlockOp { log.append("body") }
        op.addCondition(.any([
            .predicate("no") { _ in log.append("no"); return false },
            .predicate("yes") { _ in log.append("yes"); return true },
            .predicate("unasked") { _ in log.append("unasked"); return true },
        ]))
        OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(log.all == ["no", "yes", "body"])
        #expect(!op.isCancelled && op.error == nil)
    }

    @Test func anyFailsWhenEveryMemberFailsCarryingTheLastFailure() {
        let op = BlockOp {}
        op.addCondition(.any([
            .predicate("a") { _ in false },
            .predicate("b") { _ in false },
        ]))
        OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(op.isCancelled)
        #expect(failure(of: op)?.condition == "any(a, b)")
        #expect((failure(of: op)?.underlyingError as? ConditionFailedError)?.condition == "b")
    }

    @Test func emptyAnyFails() {
        let ran = EventLog<String>()
        let op = BlockOp { ran.append("body") }
        op.addCondition(.any([]))
        OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(ran.count == 0)
        #expect(op.isCancelled)
        #expect(failure(of: op)?.condition == "any()")
    }

    @Test func notPassesWhenItsConditionFails() {
        let ran = EventLog<String>()
        let op = BlockOp { ran.append("body") }
        op.addCondition(.not(.predicate("p") { _ in false }))
        OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(ran.all == ["body"])
        #expect(!op.isCancelled)
    }

    @Test func notFailsWhenItsConditionPasses() {
        let ran = EventLog<String>()
        let op = BlockOp { ran.append("body") }
        op.addCondition(.not(.predicate("p") { _ in true }))
        OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(ran.count == 0)
        #expect(op.isCancelled)
        #expect(failure(of: op)?.condition == "not(p)")
    }

    @Test func combinatorsWithAsyncMembers() async {
        let op = BlockOp {}
        op.addCondition(.all([
            .any([.evaluate("async no") { _ in false }, .predicate("sync yes") { _ in true }]),
            .not(.evaluate("async throws") { _ in throw Boom(id: 3) }),
            .evaluate("async last") { _ in false },
        ]))
        OpQueue().addOperation(op)
        await op.waitUntilFinished()
        #expect(op.isCancelled)
        #expect(failure(of: op)?.condition == "async last")
    }

    // MARK: .dependency

    @Test func dependencyConditionAddsItsOperationToTheSameQueueAndRunsItFirst() {
        let log = EventLog<String>()
        let queue = OpQueue()
        let sameQueue = EventLog<Bool>()
        let permission = BlockOp {
            sameQueue.append(OpQueue.current === queue)
            log.append("permission")
        }
        let op = BlockOp { log.append("op") }
        op.addCondition(.dependency(permission))
        #expect(op.dependencies.map(ObjectIdentifier.init) == [ObjectIdentifier(permission)])
        queue.addOperation(op)
        op.waitUntilFinished()
        permission.waitUntilFinished()
        #expect(log.all == ["permission", "op"])
        #expect(sameQueue.all == [true])
        #expect(!op.isCancelled && op.error == nil)
    }

    @Test func dependencyConditionLeavesAnOperationAlreadyInAQueueThere() {
        let log = EventLog<String>()
        let queue = OpQueue()
        let other = OpQueue()
        other.isSuspended = true
        let inOther = EventLog<Bool>()
        let permission = BlockOp {
            inOther.append(OpQueue.current === other)
            log.append("permission")
        }
        other.addOperation(permission)
        let op = BlockOp { log.append("op") }
        op.addCondition(.dependency(permission))
        queue.addOperation(op)
        #expect(queue.operationCount == 1)
        other.isSuspended = false
        op.waitUntilFinished()
        #expect(log.all == ["permission", "op"])
        #expect(inOther.all == [true])
    }

    @Test func dependencyConditionFailsWhenItsOperationFailed() {
        let ran = EventLog<String>()
        let permission = FailingOp(Boom(id: 2))
        let op = BlockOp { ran.append("body") }
        let condition = OpCondition.dependency(permission)
        op.addCondition(condition)
        OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(permission.isFinished)
        #expect(ran.count == 0)
        #expect(op.isCancelled)
        #expect(failure(of: op)?.condition == condition.name)
        #expect(failure(of: op)?.underlyingError as? Boom == Boom(id: 2))
    }

    @Test func dependencyConditionFailsWhenItsOperationWasCancelled() {
        let ran = EventLog<String>()
        let permission = BlockOp { ran.append("permission") }
        permission.cancel()
        let op = BlockOp { ran.append("body") }
        op.addCondition(.dependency(permission))
        OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(permission.isFinished)
        #expect(ran.count == 0)
        #expect(op.isCancelled)
        #expect(failure(of: op)?.condition.hasPrefix("dependency(") == true)
        #expect(failure(of: op)?.underlyingError == nil)
    }

    @Test func dependencyConditionInAGroupChildMakesItsOperationAGroupChild() {
        let log = EventLog<String>()
        let permission = BlockOp { log.append("permission") }
        let child = BlockOp { log.append("child") }
        child.addCondition(.dependency(permission))
        let group = GroupOp(operations: [child])
        let queue = OpQueue()
        queue.addOperation(group)
        #expect(drains(queue))
        #expect(log.all == ["permission", "child"])
        #expect(permission.group === group)
        #expect(group.childCount == 2 && group.finishedChildCount == 2)
        #expect(group.isFinished && group.error == nil)
        #expect(!child.isCancelled)
    }

    @Test
    func failedConditionOfAGroupKeepsItsChildrenFromRunning() {
        let ran = EventLog<String>()
        let child = BlockOp { ran.append("child") }
        let group = GroupOp(operations: [child])
        group.addCondition(.predicate("group check") { _ in false })
        let queue = OpQueue()
        queue.addOperation(group)
        #expect(drains(queue))
        #expect(group.isFinished && group.isCancelled)
        #expect(failure(of: group)?.condition == "group check")
        #expect(ran.count == 0)
        #expect(child.isFinished && child.isCancelled)
    }

    // MARK: Listing

    @Test func conditionsListsTheConditionsInOrder() {
        let op = BlockOp {}
        #expect(op.conditions.isEmpty)
        let permission = BlockOp {}
        permission.name = "permission"
        op.addCondition(.predicate("p") { _ in true })
        op.addCondition(.noFailedDependencies)
        op.addCondition(.mutuallyExclusive("listing"))
        op.addCondition(.not(.noCancelledDependencies))
        op.addCondition(.dependency(permission))
        let names = op.conditions.map(\.name)
        #expect(names.count == 5)
        #expect(Array(names.prefix(4)) == ["p", "noFailedDependencies", "mutuallyExclusive(listing)", "not(noCancelledDependencies)"])
        #expect(names.last?.hasPrefix("dependency(") == true)
        #expect(op.conditions.map(\.description) == names)
    }

    // MARK: Manual start

    @Test func manualStartEvaluatesConditionsOnTheCallingThread() {
        let marker = ThreadLocal<ThreadMarker>()
        let mine = ThreadMarker()
        let onCaller = EventLog<String>()
        let op = BlockOp { if marker.value === mine { onCaller.append("body") } }
        op.addCondition(.predicate("p") { _ in
            if marker.value === mine { onCaller.append("condition") }
            return true
        })
        marker.withValue(mine) {
            op.start()
        }
        #expect(onCaller.all == ["condition", "body"])
        #expect(op.isFinished && !op.isCancelled)
    }

    @Test func manualStartWithAFailingConditionFinishesWithoutRunning() {
        let ran = EventLog<String>()
        let op = BlockOp { ran.append("body") }
        op.addCondition(.predicate("manual no") { _ in false })
        op.start()
        #expect(op.isFinished)
        #expect(op.isCancelled)
        #expect(ran.count == 0)
        #expect(failure(of: op)?.condition == "manual no")
    }

    @Test func manualStartWaitsForAnAsyncCondition() async {
        // start() blocks while the async condition runs in a task: do it on a thread of its own,
        // not on the cooperative pool the condition needs.
        let ran = EventLog<String>()
        let passing = BlockOp { ran.append("passing") }
        passing.addCondition(.evaluate("async yes") { _ in
            try? await Task.sleep(for: .milliseconds(2))
            return true
        })
        let failing = BlockOp { ran.append("failing") }
        failing.addCondition(.evaluate("async no") { _ in false })
        let finishedOnReturn = await onOwnThread {
            passing.start()
            failing.start()
            return passing.isFinished && failing.isFinished
        }
        #expect(finishedOnReturn)
        #expect(ran.all == ["passing"])
        #expect(failing.isCancelled)
        #expect(failure(of: failing)?.condition == "async no")
    }

    // MARK: Misuse

    @Test(.oneExitTestAtATime) func addingAConditionAfterTheOperationWasAddedToAQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.isSuspended = true
            let op = BlockOp {}
            op.name = "late-condition"
            queue.addOperation(op)
            op.addCondition(.predicate("late") { _ in true })
        }
        expectStandardError(of: result, toContain: ["\"late-condition\"", "after it was added to a queue"])
    }

    @Test(.oneExitTestAtATime) func mutuallyExclusiveInsideAnyTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = BlockOp {}
            op.name = "exclusive-in-any"
            op.addCondition(.any([.predicate("p") { _ in true }, .mutuallyExclusive("in-any")]))
        }
        expectStandardError(of: result, toContain: ["\"exclusive-in-any\"", "mutuallyExclusive(in-any)", "cannot be honoured"])
    }

    @Test(.oneExitTestAtATime) func mutuallyExclusiveInsideNotTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = BlockOp {}
            op.name = "exclusive-in-not"
            op.addCondition(.not(.mutuallyExclusive("in-not")))
        }
        expectStandardError(of: result, toContain: ["\"exclusive-in-not\"", "mutuallyExclusive(in-not)", "cannot be honoured"])
    }
}

private extension Op {
    /// Starts the operation manually and returns it (a finished dependency).
    func started() -> Self {
        start()
        return self
    }
}
