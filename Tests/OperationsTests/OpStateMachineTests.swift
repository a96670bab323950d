import Testing
@testable import Operations

/// Drives the pure operation state machine directly, without threads or locks.
@Suite struct OpStateMachineTests {
    @Test func manualStartRunsAReadyOperation() {
        var machine = OpStateMachine()
        check(machine.startManually() == .run)
        check(machine.isExecuting)
        check(!machine.isFinished)
    }

    @Test func manualStartOfACancelledOperationFinishesWithoutRunning() {
        var machine = OpStateMachine()
        _ = machine.cancel()
        guard case .finishWithoutRunning(let finish) = machine.startManually() else {
            Issue.record("expected finishWithoutRunning")
            return
        }
        check(finish.dependents.isEmpty)
        check(machine.isFinished)
        check(!machine.isExecuting)
    }

    @Test func manualStartReportsEveryMisuse() {
        var executing = OpStateMachine()
        _ = executing.startManually()
        check(executing.startManually() == .misuse(.startWhileExecuting))

        var notReady = OpStateMachine()
        _ = notReady.addDependency(BlockOp {}, dependencyIsUnfinished: true, isNewer: false)
        check(notReady.startManually() == .misuse(.startWhileNotReady))

        var enqueued = OpStateMachine()
        _ = enqueued.enqueue(in: OpQueue())
        check(enqueued.startManually() == .misuse(.startWhileEnqueued))

        var finished = OpStateMachine()
        _ = finished.startManually()
        _ = finished.finish()
        check(finished.startManually() == .ignore)
    }

    @Test func enqueueSchedulesAReadyOperationAndWaitsForAnUnreadyOne() {
        let queue = OpQueue()
        var ready = OpStateMachine()
        check(ready.enqueue(in: queue) == .schedule(.init(priority: .normal, ticket: 0)))
        check(ready.isScheduled)

        var waiting = OpStateMachine()
        let dependency = BlockOp {}
        _ = waiting.addDependency(dependency, dependencyIsUnfinished: true, isNewer: false)
        check(waiting.enqueue(in: queue) == .wait)
        check(!waiting.isScheduled)
        check(waiting.dependencyFinished(dependency) == .schedule(queue, .init(priority: .normal, ticket: 0)))
    }

    @Test func enqueueReportsEveryMisuse() {
        var twice = OpStateMachine()
        _ = twice.enqueue(in: OpQueue())
        check(twice.enqueue(in: OpQueue()) == .misuse(.enqueueWhileEnqueued))

        var executing = OpStateMachine()
        _ = executing.startManually()
        check(executing.enqueue(in: OpQueue()) == .misuse(.enqueueWhileExecuting))

        var finished = OpStateMachine()
        _ = finished.startManually()
        _ = finished.finish()
        check(finished.enqueue(in: OpQueue()) == .misuse(.enqueueWhenFinished))
    }

    @Test func queueStartSkipsStaleEntries() {
        let queue = OpQueue()
        var machine = OpStateMachine()
        _ = machine.enqueue(in: queue)
        check(machine.setPriority(.high) == .schedule(queue, .init(priority: .high, ticket: 1)))
        check(machine.startFromQueue(ticket: 0) == .skip)
        check(machine.startFromQueue(ticket: 1) == .run)
        check(machine.startFromQueue(ticket: 1) == .skip)
    }

    @Test func queueStartSkipsAnOperationThatIsNoLongerReady() {
        let queue = OpQueue()
        var machine = OpStateMachine()
        _ = machine.enqueue(in: queue)
        let dependency = BlockOp {}
        _ = machine.addDependency(dependency, dependencyIsUnfinished: true, isNewer: false)
        // The dependency withdrew the ready-list entry: its ticket is stale.
        check(!machine.isScheduled)
        check(machine.startFromQueue(ticket: 0) == .skip)
        check(machine.dependencyFinished(dependency) == .schedule(queue, .init(priority: .normal, ticket: 1)))
    }

    @Test func cancellationMakesAWaitingOperationReadyAndSchedulesIt() {
        let queue = OpQueue()
        var machine = OpStateMachine()
        _ = machine.addDependency(BlockOp {}, dependencyIsUnfinished: true, isNewer: false)
        _ = machine.enqueue(in: queue)
        check(!machine.isReady)
        let action = machine.cancel()
        check(action.didCancel)
        check(!action.wasExecuting)
        check(action.readiness == .schedule(queue, .init(priority: .normal, ticket: 0)))
        check(machine.isReady)
        check(machine.cancel().didCancel == false)
    }

    @Test func cancellingAnExecutingOperationReportsIt() {
        var machine = OpStateMachine()
        _ = machine.startManually()
        let action = machine.cancel()
        check(action.didCancel && action.wasExecuting)
        check(action.readiness == .none)
    }

    @Test func cancellingAFinishedOperationDoesNothing() {
        var machine = OpStateMachine()
        _ = machine.startManually()
        _ = machine.finish()
        check(machine.cancel() == .init(didCancel: false, wasExecuting: false, readiness: .none))
        check(!machine.isCancelled)
    }

    @Test func dependenciesAreCountedOnlyWhileUnfinishedAndPending() {
        let a = BlockOp {}
        let b = BlockOp {}
        var machine = OpStateMachine()
        check(machine.addDependency(a, dependencyIsUnfinished: true, isNewer: false) == .added(counted: true))
        check(machine.addDependency(a, dependencyIsUnfinished: true, isNewer: false) == .alreadyPresent)
        check(machine.addDependency(b, dependencyIsUnfinished: false, isNewer: false) == .added(counted: false))
        check(machine.unfinishedDependencyCount == 1)
        let removal = machine.removeDependency(a, wasCounted: true)
        check(removal.removed)
        check(machine.isReady)
        check(!machine.removeDependency(a, wasCounted: false).removed)

        var executing = OpStateMachine()
        _ = executing.startManually()
        check(executing.addDependency(a, dependencyIsUnfinished: true, isNewer: false) == .added(counted: false))
        check(executing.unfinishedDependencyCount == 0)
    }

    @Test func finishedOperationsRefuseNewDependents() {
        var machine = OpStateMachine()
        let dependent = BlockOp {}
        check(machine.addDependent(dependent))
        _ = machine.startManually()
        let finish = machine.finish()
        check(finish.dependents.count == 1 && finish.dependents[0] === dependent)
        check(!machine.addDependent(BlockOp {}))
        check(!machine.removeDependent(serial: dependent.serial))
    }

    @Test func asynchronousFinishRejectsMisuse() {
        var pending = OpStateMachine()
        check(pending.requestFinish() == .failure(.init(misuse: .finishWhenNotExecuting)))
        var executing = OpStateMachine()
        _ = executing.startManually()
        check((try? executing.requestFinish().get()) != nil)
        check(executing.requestFinish() == .failure(.init(misuse: .finishTwice)))
        var cancelled = OpStateMachine()
        _ = cancelled.cancel()
        _ = cancelled.startManually()
        check(cancelled.requestFinish() == .failure(.init(misuse: .finishWithoutExecuting)))
    }

    @Test func completionBlockIsTakenOnceAndWaitersAreReleasedOnCompletion() {
        var machine = OpStateMachine()
        check(machine.setCompletionBlock {})
        check(machine.addWaiter {})
        _ = machine.startManually()
        let finish = machine.finish()
        check(finish.hasCompletionBlock)
        check(!machine.setCompletionBlock {}, "a block set while finishing is kept")
        check(machine.takeCompletionBlock() != nil)
        check(machine.completionBlock == nil)
        check(machine.addWaiter {})
        let (waiters, queue, settles) = machine.complete()
        check(waiters.count == 2)
        check(queue == nil && machine.queue == nil && !settles)
        check(!machine.addWaiter {})
    }

    @Test func priorityChangeOfAnUnscheduledOperationDoesNotReschedule() {
        var machine = OpStateMachine()
        check(machine.setPriority(.veryHigh) == .none)
        check(machine.priority == .veryHigh)
        check(machine.setPriority(.veryHigh) == .none)
    }
}
