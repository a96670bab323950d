import Testing
@testable import Operations

/// `Op.totalTimeout`: measured on the operation's clock from the moment it enters a queue, so it
/// counts waiting; passing before the start, the operation leaves without running (phase
/// `.waiting`), even with unfinished dependencies; passing while it runs, it cancels it as
/// `timeout` does (phase `.running`).
@Suite struct TotalTimeoutTests {
    /// An operation that records whether its body ran and whether its completion block ran.
    final class Probe: Sendable {
        let ran = LockedBox(false)
        let completed = LockedBox(false)
        let op: BlockOp

        init(name: String, clock: ManualClock, totalTimeout: Duration) {
            let ran = ran
            let completed = completed
            op = BlockOp { ran.withLockedValue { $0 = true } }
            op.name = name
            op.clock = clock
            op.totalTimeout = totalTimeout
            op.completionBlock = { completed.withLockedValue { $0 = true } }
        }

        var didRun: Bool { ran.withLockedValue { $0 } }
        var didComplete: Bool { completed.withLockedValue { $0 } }
    }

    @Test func passingWhileWaitingForAnUnfinishedDependencyTheOperationLeavesWithoutRunning() async {
        let clock = ManualClock()
        let dependency = BlockOp {}   // never started: unfinished throughout
        let probe = Probe(name: "waits-for-dependency", clock: clock, totalTimeout: .seconds(5))
        probe.op.addDependency(dependency)
        let dependentRan = LockedBox(false)
        let dependent = BlockOp { dependentRan.withLockedValue { $0 = true } }
        dependent.addDependency(probe.op)
        let queue = OpQueue()
        await queue.addOperations([probe.op, dependent], waitUntilFinished: false)

        #expect(await clock.waitForSleepers(1))   // armed as it entered the queue
        clock.advance(by: .seconds(4))
        #expect(clock.sleeperCount == 1)
        #expect(!probe.op.isCancelled)
        clock.advance(by: .seconds(1))

        #expect(await eventuallyAsync { probe.didComplete })
        #expect(probe.op.isFinished)
        #expect(probe.op.isCancelled)
        #expect(!probe.didRun)
        let error = probe.op.error as? OpTimeoutError
        #expect(error?.phase == .waiting)
        #expect(error?.timeout == .seconds(5))
        #expect(error?.operation == probe.op.description)
        #expect(!dependency.isFinished)
        // Its dependent sees it finished (cancelled) and goes on.
        #expect(await eventuallyAsync { dependent.isFinished })
        #expect(dependentRan.withLockedValue { $0 })
        #expect(await eventuallyAsync { queue.operationCount == 0 })

        // The dependency finishing later changes nothing.
        dependency.start()
        #expect(dependency.isFinished)
        #expect(probe.op.error as? OpTimeoutError == error)
    }

    @Test func passingInASuspendedQueueCancelsAtOnceAndTheOperationLeavesWhenTheQueueResumes() async {
        let clock = ManualClock()
        let probe = Probe(name: "in-suspended-queue", clock: clock, totalTimeout: .seconds(5))
        let queue = OpQueue()
        queue.isSuspended = true
        queue.addOperation(probe.op)

        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(5))
        #expect(await eventuallyAsync { probe.op.isCancelled })
        #expect((probe.op.error as? OpTimeoutError)?.phase == .waiting)
        #expect(!probe.op.isFinished)   // a suspended queue starts nothing
        #expect(queue.operationCount == 1)

        queue.isSuspended = false
        #expect(await eventuallyAsync { probe.didComplete })
        #expect(!probe.didRun)
        #expect(await eventuallyAsync { queue.operationCount == 0 })
    }

    @Test func passingWhileWaitingForTheQueueWidthCountsTheWait() async {
        let clock = ManualClock()
        let release = Gate()
        let blocker = AsyncOp { _ = await release.waitOffThread() }
        let probe = Probe(name: "waits-for-a-slot", clock: clock, totalTimeout: .seconds(5))
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        await queue.addOperations([blocker, probe.op], waitUntilFinished: false)

        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(5))
        #expect(await eventuallyAsync { probe.op.isCancelled })
        #expect((probe.op.error as? OpTimeoutError)?.phase == .waiting)
        release.open()
        #expect(await eventuallyAsync { probe.didComplete })
        #expect(!probe.didRun)
        #expect(blocker.error == nil)
    }

    @Test func passingWhileWaitingForAnExclusivityCategoryTheOperationLeavesWithoutRunning() async {
        let clock = ManualClock()
        let category = uniqueToken("total-timeout")
        let release = Gate()
        let holder = AsyncOp { _ = await release.waitOffThread() }
        holder.addCondition(.mutuallyExclusive(category))
        let probe = Probe(name: "waits-for-category", clock: clock, totalTimeout: .seconds(5))
        probe.op.addCondition(.mutuallyExclusive(category))
        let queue = OpQueue()
        queue.addOperation(holder)
        #expect(await eventuallyAsync { holder.isExecuting })
        queue.addOperation(probe.op)

        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(5))
        #expect(await eventuallyAsync { probe.didComplete })
        #expect(!probe.didRun)
        #expect((probe.op.error as? OpTimeoutError)?.phase == .waiting)
        #expect(holder.isExecuting)
        release.open()
        #expect(await eventuallyAsync { holder.isFinished })
    }

    @Test func passingWhileAnAsyncConditionIsEvaluatedTheOperationLeavesWithoutRunning() async {
        let clock = ManualClock()
        let probe = Probe(name: "waits-for-condition", clock: clock, totalTimeout: .seconds(5))
        probe.op.addCondition(.evaluate("never answers") { _ in
            try await Task.sleep(for: .seconds(3600))   // ends when its task is cancelled
            return true
        })
        let queue = OpQueue()
        queue.addOperation(probe.op)

        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(5))
        #expect(await eventuallyAsync { probe.didComplete })
        #expect(!probe.didRun)
        #expect((probe.op.error as? OpTimeoutError)?.phase == .waiting)
    }

    @Test func aGroupsChildCountsFromItsEntryIntoTheGroupsQueue() async {
        let clock = ManualClock()
        let dependency = BlockOp {}   // never started
        let probe = Probe(name: "child", clock: clock, totalTimeout: .seconds(5))
        probe.op.addDependency(dependency)
        let sibling = BlockOp {}
        let group = GroupOp(operations: [probe.op, sibling])
        let queue = OpQueue()
        queue.addOperation(group)

        #expect(await clock.waitForSleepers(1))   // armed as the child entered the group's queue
        clock.advance(by: .seconds(5))
        #expect(await eventuallyAsync { group.isFinished })
        #expect(!probe.didRun)
        #expect(await eventuallyAsync { probe.didComplete })
        #expect((probe.op.error as? OpTimeoutError)?.phase == .waiting)
        #expect(sibling.isFinished && !sibling.isCancelled)
    }

    @Test func passingWhileRunningCancelsTheOperationInTheRunningPhase() async {
        let clock = ManualClock()
        let op = ClockTests.untilCancelled()
        op.name = "runs-too-long"
        op.clock = clock
        op.totalTimeout = .seconds(5)
        let queue = OpQueue()
        queue.addOperation(op)

        #expect(await clock.waitForSleepers(1))
        #expect(await eventuallyAsync { op.isExecuting })
        clock.advance(by: .seconds(5))
        #expect(await eventuallyAsync { op.isFinished })
        #expect(op.isCancelled)
        let error = op.error as? OpTimeoutError
        #expect(error?.phase == .running)
        #expect(error?.timeout == .seconds(5))
    }

    @Test func theTimeWaitedCountsAgainstTheTimeToRun() async {
        let clock = ManualClock()
        let dependency = BlockOp {}
        let op = ClockTests.untilCancelled()
        op.clock = clock
        op.totalTimeout = .seconds(10)
        op.addDependency(dependency)
        let queue = OpQueue()
        queue.addOperation(op)
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(6))   // waited 6 of 10 seconds
        queue.addOperation(dependency)
        #expect(await eventuallyAsync { op.isExecuting })
        clock.advance(by: .seconds(3))
        #expect(!op.isCancelled)
        clock.advance(by: .seconds(1))
        #expect(await eventuallyAsync { op.isFinished })
        #expect((op.error as? OpTimeoutError)?.phase == .running)
    }

    @Test func anOperationStartedByHandCountsFromItsStart() async {
        let clock = ManualClock()
        let op = ClockTests.untilCancelled()
        op.clock = clock
        op.totalTimeout = .seconds(5)
        op.start()
        #expect(op.isExecuting)
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(5))
        #expect(await eventuallyAsync { op.isFinished })
        #expect((op.error as? OpTimeoutError)?.phase == .running)
    }

    @Test func anOperationThatFinishesInTimeKeepsItsOutcome() async {
        let clock = ManualClock()
        let op = BlockOp {}
        op.clock = clock
        op.totalTimeout = .seconds(5)
        let queue = OpQueue()
        queue.addOperation(op)
        #expect(await eventuallyAsync { op.isFinished })
        #expect(await clock.waitUntilNoSleepers())
        clock.advance(by: .seconds(10))
        #expect(!op.isCancelled)
        #expect(op.error == nil)
    }

    @Test func aZeroTotalTimeoutCancelsTheOperationAsItEntersItsQueue() async {
        let clock = ManualClock()
        let probe = Probe(name: "zero", clock: clock, totalTimeout: .zero)
        let queue = OpQueue()
        queue.isSuspended = true
        queue.addOperation(probe.op)
        #expect(probe.op.isCancelled)
        #expect((probe.op.error as? OpTimeoutError)?.phase == .waiting)
        queue.isSuspended = false
        #expect(await eventuallyAsync { probe.didComplete })
        #expect(!probe.didRun)
    }

    @Test func theDefaultClockDrivesATotalTimeoutToo() async {
        let dependency = BlockOp {}
        let op = BlockOp {}
        op.totalTimeout = .milliseconds(50)
        op.addDependency(dependency)
        let queue = OpQueue()
        queue.addOperation(op)
        // A hang guard only: the limit is short, the wait generous.
        #expect(await eventuallyAsync { op.isFinished })
        #expect((op.error as? OpTimeoutError)?.phase == .waiting)
    }

    @Test func theErrorKeepsItsSourceCompatibleInitializer() {
        let running = OpTimeoutError(timeout: .seconds(1), operation: "op")
        #expect(running.phase == .running)
        #expect(running.description.contains("did not finish"))
        let waiting = OpTimeoutError(timeout: .seconds(1), operation: "op", phase: .waiting)
        #expect(waiting != running)
        #expect(waiting.description.contains("did not start"))
    }

    @Test func theStateMachineDecidesThePhase() {
        var machine = OpStateMachine()
        #expect(!machine.totalTimeoutPassed { OpTimeoutError(timeout: .seconds(1), operation: "m", phase: $0) })
        _ = machine.setTotalTimeout(.seconds(1))
        var phase: OpTimeoutError.Phase?
        #expect(machine.totalTimeoutPassed { phase = $0; return OpTimeoutError(timeout: .seconds(1), operation: "m", phase: $0) })
        #expect(phase == .waiting)

        var running = OpStateMachine()
        _ = running.setTotalTimeout(.seconds(1))
        running.lifecycle = .executing
        #expect(running.totalTimeoutPassed { phase = $0; return OpTimeoutError(timeout: .seconds(1), operation: "m", phase: $0) })
        #expect(phase == .running)
        running.endTimeout()
        var over = running
        over.isCancelled = false
        #expect(!over.totalTimeoutPassed { OpTimeoutError(timeout: .seconds(1), operation: "m", phase: $0) })
        // Frozen once it started.
        #expect(!running.setTotalTimeout(nil).accepted)
        #expect(!running.setClock(nil).accepted)
    }

    @Test(.oneExitTestAtATime) func settingTheTotalTimeoutAfterTheOperationEnteredAQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.isSuspended = true
            let op = BlockOp {}
            op.name = "late-total"
            queue.addOperation(op)
            op.totalTimeout = .seconds(1)
        }
        expectStandardError(of: result, toContain: ["\"late-total\"", "totalTimeout", "before adding the operation to a queue"])
    }

    @Test(.oneExitTestAtATime) func aNegativeTotalTimeoutTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = BlockOp {}
            op.name = "negative-total"
            op.totalTimeout = .seconds(-1)
        }
        expectStandardError(of: result, toContain: ["\"negative-total\"", "negative", "nil"])
    }
}
