import Testing
@testable import Operations

/// Drives the pure scheduler state machine directly, without threads or locks.
@Suite struct OpQueueStateMachineTests {
    private func entry(_ operation: Op) -> ReadyLists.Entry {
        ReadyLists.Entry(operation: operation, ticket: 0)
    }

    private func nextOperation(_ machine: inout OpQueueStateMachine, releasing: Bool = false) -> Op? {
        if case .run(let entry, _) = machine.next(releasingSlot: releasing) { return entry.operation }
        return nil
    }

    @Test func firstReadyOperationRequestsOneDrainer() {
        var machine = OpQueueStateMachine()
        let a = BlockOp {}
        let b = BlockOp {}
        machine.addMember(a)
        machine.addMember(b)
        check(machine.push(entry(a), priority: .normal, callerWillPoll: false))
        check(!machine.push(entry(b), priority: .normal, callerWillPoll: false))
        check(machine.pendingDrainers == 1)
        machine.drainerStarted()
        guard case .run(let first, let more) = machine.next(releasingSlot: false) else {
            Issue.record("expected an operation")
            return
        }
        check(first.operation === a)
        check(more)
        check(machine.runningCount == 1)
    }

    @Test func aPollingCallerDoesNotRequestADrainer() {
        var machine = OpQueueStateMachine()
        let a = BlockOp {}
        machine.addMember(a)
        check(!machine.push(entry(a), priority: .normal, callerWillPoll: true))
        check(machine.pendingDrainers == 0)
    }

    @Test func nextHonoursPriorityAndWidth() {
        var machine = OpQueueStateMachine()
        _ = machine.setMaxConcurrentOperationCount(1)
        let low = BlockOp {}
        let high = BlockOp {}
        machine.addMember(low)
        machine.addMember(high)
        _ = machine.push(entry(low), priority: .low, callerWillPoll: false)
        _ = machine.push(entry(high), priority: .high, callerWillPoll: false)
        machine.drainerStarted()
        check(nextOperation(&machine) === high)
        check(machine.next(releasingSlot: false) == nil)
        check(nextOperation(&machine, releasing: true) === low)
    }

    @Test func suspensionStopsStartsAndResumingRequestsADrainer() {
        var machine = OpQueueStateMachine()
        check(!machine.setSuspended(true))
        let a = BlockOp {}
        machine.addMember(a)
        check(!machine.push(entry(a), priority: .normal, callerWillPoll: false))
        check(machine.setSuspended(false))
        machine.drainerStarted()
        check(nextOperation(&machine) === a)
    }

    @Test func raisingTheWidthRequestsADrainer() {
        var machine = OpQueueStateMachine()
        _ = machine.setMaxConcurrentOperationCount(1)
        let a = BlockOp {}
        let b = BlockOp {}
        machine.addMember(a)
        machine.addMember(b)
        _ = machine.push(entry(a), priority: .normal, callerWillPoll: false)
        _ = machine.push(entry(b), priority: .normal, callerWillPoll: false)
        machine.drainerStarted()
        _ = machine.next(releasingSlot: false)
        check(machine.setMaxConcurrentOperationCount(2))
    }

    @Test func barrierWaitsForEarlierMembersAndHoldsLaterOnes() {
        var machine = OpQueueStateMachine()
        let before = BlockOp {}
        let barrier = BlockOp {}
        barrier.membership.isBarrier = true
        let after = BlockOp {}
        machine.addMember(before)
        machine.addMember(barrier)
        machine.addMember(after)
        check(after.membership.epoch == 1 && barrier.membership.epoch == 0 && before.membership.epoch == 0)
        _ = machine.push(entry(after), priority: .veryHigh, callerWillPoll: false)
        _ = machine.push(entry(barrier), priority: .normal, callerWillPoll: false)
        _ = machine.push(entry(before), priority: .veryLow, callerWillPoll: false)
        machine.drainerStarted()
        check(nextOperation(&machine) === before)
        check(machine.next(releasingSlot: true) == nil)   // `after` is held, barrier not due
        _ = machine.removeMember(before)
        check(nextOperation(&machine) === barrier)
        check(machine.next(releasingSlot: true) == nil)
        _ = machine.removeMember(barrier)
        check(nextOperation(&machine) === after)
    }

    @Test func leavingTheLastMemberReleasesTheWaiters() {
        var machine = OpQueueStateMachine()
        check(!machine.addWaiter {})
        let a = BlockOp {}
        machine.addMember(a)
        check(machine.addWaiter {})
        let action = machine.removeMember(a)
        check(action.waiters.count == 1)
        check(action.departed === a)
        check(machine.operationCount == 0)
    }

    @Test func asynchronousOperationsGiveTheirSlotBack() {
        var machine = OpQueueStateMachine()
        _ = machine.setMaxConcurrentOperationCount(1)
        let a = BlockOp {}
        let b = BlockOp {}
        machine.addMember(a)
        machine.addMember(b)
        _ = machine.push(entry(a), priority: .normal, callerWillPoll: false)
        _ = machine.push(entry(b), priority: .normal, callerWillPoll: false)
        machine.drainerStarted()
        check(nextOperation(&machine) === a)
        check(machine.next(releasingSlot: false) == nil)  // a still holds the slot
        check(machine.releaseSlot())                      // a finished elsewhere
        machine.drainerStarted()
        check(nextOperation(&machine) === b)
    }
}

extension OpQueueStateMachine.NextAction {
    static func == (lhs: Self, rhs: Self?) -> Bool {
        switch (lhs, rhs) {
        case (.stop, .none): true
        case (.stop, .some), (.run, _): false
        }
    }
}
