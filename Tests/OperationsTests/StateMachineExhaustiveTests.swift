import Testing
@testable import Operations

/// Drives the operation state machine through every (state, event) pair and compares each
/// action with an independent statement of the rules (the oracle below).
@Suite struct OpStateMachineExhaustiveTests {
    enum Phase: CaseIterable { case pending, executing, finishing, finished }

    /// An abstract state: where the operation is, whether it was cancelled, whether an unfinished
    /// dependency holds it back, and whether it is in a queue.
    struct State: CustomStringConvertible, CaseIterable {
        var phase: Phase
        var cancelled: Bool
        var blocked: Bool
        var enqueued: Bool

        static var allCases: [State] {
            var states: [State] = []
            for phase in Phase.allCases {
                for cancelled in [false, true] {
                    for enqueued in [false, true] {
                        let blockedChoices = phase == .pending ? [false, true] : [false]
                        for blocked in blockedChoices {
                            // A finished operation has left its queue.
                            if phase == .finished && enqueued { continue }
                            states.append(State(phase: phase, cancelled: cancelled, blocked: blocked, enqueued: enqueued))
                        }
                    }
                }
            }
            return states
        }

        var isReady: Bool { cancelled || !blocked }

        var description: String {
            "\(phase)\(cancelled ? "+cancelled" : "")\(blocked ? "+blocked" : "")\(enqueued ? "+enqueued" : "")"
        }
    }

    enum Event: CaseIterable {
        case startManually, startFromQueueCurrentTicket, startFromQueueStaleTicket, enqueue, cancel
        case requestFinish, addUnfinishedDependency, dependencyFinished, removeBlockingDependency
        case raisePriority, fail, addWaiter
    }

    let queue = OpQueue()
    let blocker = BlockOp {}

    /// Builds a machine in `state` through legal events only.
    func make(_ state: State) -> OpStateMachine {
        var machine = OpStateMachine()
        if state.blocked { _ = machine.addDependency(blocker, dependencyIsUnfinished: true, isNewer: false) }
        if state.enqueued { _ = machine.enqueue(in: queue) }
        if state.phase == .pending {
            if state.cancelled { _ = machine.cancel() }
            return machine
        }
        let started = state.enqueued ? machine.startFromQueue(ticket: 0) : machine.startManually()
        precondition(started == .run, "could not start \(state)")
        if state.cancelled { _ = machine.cancel() }
        if state.phase == .executing { return machine }
        _ = machine.finish()
        if state.phase == .finishing { return machine }
        _ = machine.complete()
        return machine
    }

    /// What the rules say an event does in a state.
    func expected(_ event: Event, in state: State) -> String {
        let done = state.phase == .finishing || state.phase == .finished
        switch event {
        case .startManually:
            switch state.phase {
            case .finishing, .finished: return "ignore"
            case .executing: return "misuse(startWhileExecuting)"
            case .pending:
                if state.enqueued { return "misuse(startWhileEnqueued)" }
                if !state.isReady { return "misuse(startWhileNotReady)" }
                return state.cancelled ? "finishWithoutRunning" : "run"
            }
        case .startFromQueueCurrentTicket:
            guard state.phase == .pending, state.enqueued, state.isReady else { return "skip" }
            return state.cancelled ? "finishWithoutRunning" : "run"
        case .startFromQueueStaleTicket:
            return "skip"
        case .enqueue:
            if state.enqueued { return "misuse(enqueueWhileEnqueued)" }
            switch state.phase {
            case .executing: return "misuse(enqueueWhileExecuting)"
            case .finishing, .finished: return "misuse(enqueueWhenFinished)"
            case .pending: return state.isReady ? "schedule" : "wait"
            }
        case .cancel:
            if state.cancelled || done { return "noop" }
            if state.phase == .executing { return "cancelled(executing)" }
            // A blocked operation becomes ready; in a queue it is scheduled (unless it already was).
            return state.enqueued && state.blocked ? "cancelled(schedule)" : "cancelled"
        case .requestFinish:
            switch state.phase {
            case .executing: return "finished"
            case .pending: return "misuse(finishWhenNotExecuting)"
            case .finishing, .finished: return "misuse(finishTwice)"
            }
        case .addUnfinishedDependency:
            return state.phase == .pending ? "added(counted)" : "added(uncounted)"
        case .dependencyFinished:
            guard state.blocked else { return "n/a" }
            return state.enqueued && !state.cancelled ? "schedule" : "none"
        case .removeBlockingDependency:
            guard state.blocked else { return "n/a" }
            return state.enqueued && !state.cancelled ? "removed(schedule)" : "removed"
        case .raisePriority:
            // Only an operation waiting on a ready list moves.
            let scheduled = state.phase == .pending && state.enqueued && state.isReady
            return scheduled ? "reschedule" : "none"
        case .fail:
            guard state.phase == .pending else { return "none" }
            if !state.enqueued { return "finished" }
            return state.blocked && !state.cancelled ? "readiness(schedule)" : "readiness(none)"
        case .addWaiter:
            return state.phase == .finished ? "refused" : "registered"
        }
    }

    /// What the machine does.
    func actual(_ event: Event, on machine: inout OpStateMachine) -> String {
        switch event {
        case .startManually:
            return describe(machine.startManually())
        case .startFromQueueCurrentTicket:
            return describe(machine.startFromQueue(ticket: machine.ticket))
        case .startFromQueueStaleTicket:
            return describe(machine.startFromQueue(ticket: machine.ticket &+ 7))
        case .enqueue:
            switch machine.enqueue(in: OpQueue()) {
            case .schedule: return "schedule"
            case .wait: return "wait"
            case .passGates: return "gates (the states here have no conditions)"
            case .misuse(let misuse): return "misuse(\(misuse))"
            }
        case .cancel:
            let action = machine.cancel()
            if !action.didCancel { return "noop" }
            if action.wasExecuting { return "cancelled(executing)" }
            return action.readiness == .none ? "cancelled" : "cancelled(schedule)"
        case .requestFinish:
            switch machine.requestFinish() {
            case .success: return "finished"
            case .failure(let error): return "misuse(\(error.misuse))"
            }
        case .addUnfinishedDependency:
            switch machine.addDependency(BlockOp {}, dependencyIsUnfinished: true, isNewer: false) {
            case .added(let counted): return counted ? "added(counted)" : "added(uncounted)"
            case .alreadyPresent: return "alreadyPresent"
            }
        case .dependencyFinished:
            guard machine.unfinishedDependencyCount > 0, let dependency = machine.firstCountedDependency else { return "n/a" }
            return machine.dependencyFinished(dependency) == .none ? "none" : "schedule"
        case .removeBlockingDependency:
            guard machine.unfinishedDependencyCount > 0 else { return "n/a" }
            let (removed, action) = machine.removeDependency(blocker, wasCounted: true)
            return (removed ? "removed" : "missing") + (action == .none ? "" : "(schedule)")
        case .raisePriority:
            return machine.setPriority(.veryHigh) == .none ? "none" : "reschedule"
        case .fail:
            switch machine.fail(with: DependencyCycleError(operations: [])) {
            case .none: return "none"
            case .finish: return "finished"
            case .readiness(let readiness): return readiness == .none ? "readiness(none)" : "readiness(schedule)"
            }
        case .addWaiter:
            return machine.addWaiter({}) ? "registered" : "refused"
        }
    }

    func describe(_ action: OpStateMachine.StartAction) -> String {
        switch action {
        case .run: "run"
        case .finishWithoutRunning: "finishWithoutRunning"
        case .ignore: "ignore"
        case .skip: "skip"
        case .passGates: "passGates (the states here have no conditions)"
        case .takeCategories: "takeCategories (the states here have no conditions)"
        case .misuse(let misuse): "misuse(\(misuse))"
        }
    }

    @Test(arguments: State.allCases)
    func everyEventFollowsTheRules(in state: State) {
        for event in Event.allCases {
            var machine = make(state)
            let got = actual(event, on: &machine)
            let want = expected(event, in: state)
            #expect(got == want, "\(event) in \(state)")
        }
    }

    @Test func theStateSpaceIsCovered() {
        #expect(State.allCases.count == 18)
        #expect(Event.allCases.count == 12)
    }
}

/// Drives the scheduler state machine through every combination of its conditions and events.
@Suite struct OpQueueStateMachineExhaustiveTests {
    /// An abstract scheduler state.
    struct State: CustomStringConvertible, CaseIterable {
        var suspended: Bool
        var full: Bool          // as many operations running as the width allows
        var hasReady: Bool      // an operation waits on a ready list
        var drainerPending: Bool

        static var allCases: [State] {
            var states: [State] = []
            for suspended in [false, true] {
                for full in [false, true] {
                    for hasReady in [false, true] {
                        for drainerPending in [false, true] {
                            states.append(State(suspended: suspended, full: full, hasReady: hasReady, drainerPending: drainerPending))
                        }
                    }
                }
            }
            return states
        }

        var canStart: Bool { !suspended && !full && hasReady }

        var description: String {
            [suspended ? "suspended" : nil, full ? "full" : nil, hasReady ? "ready" : nil,
             drainerPending ? "drainerPending" : nil].compactMap { $0 }.joined(separator: "+")
        }
    }

    enum Event: CaseIterable {
        case pushReady, drainerNext, drainerNextReleasing, releaseSlot, suspend, resume, widen, removeRunningMember
    }

    /// Builds a width-1 machine in `state`. The running operation (if `full`) is `running`.
    func make(_ state: State, running: Op, waiting: Op) -> OpQueueStateMachine {
        var machine = OpQueueStateMachine()
        _ = machine.setMaxConcurrentOperationCount(1)
        machine.addMember(running)
        _ = machine.push(ReadyLists.Entry(operation: running, ticket: 0), priority: .normal, callerWillPoll: false)
        machine.drainerStarted()
        if case .run = machine.next(releasingSlot: false) {} else { preconditionFailure("could not start") }
        if !state.full {
            _ = machine.releaseSlot()
        }
        if state.hasReady {
            machine.addMember(waiting)
            _ = machine.push(ReadyLists.Entry(operation: waiting, ticket: 0), priority: .normal, callerWillPoll: true)
        }
        if state.suspended { _ = machine.setSuspended(true) }
        if state.drainerPending && machine.pendingDrainers == 0 {
            // Request one through a push while a start is possible, then restore the conditions.
            let extra = BlockOp {}
            machine.addMember(extra)
            let wasSuspended = machine.isSuspended
            _ = machine.setSuspended(false)
            let wasFull = machine.runningCount >= machine.width
            if wasFull { _ = machine.setMaxConcurrentOperationCount(2) }
            _ = machine.push(ReadyLists.Entry(operation: extra, ticket: 0), priority: .veryLow, callerWillPoll: false)
            if wasFull { _ = machine.setMaxConcurrentOperationCount(1) }
            _ = machine.setSuspended(wasSuspended)
        }
        return machine
    }

    @Test(arguments: State.allCases)
    func everyEventFollowsTheRules(in state: State) {
        for event in Event.allCases {
            let running = BlockOp {}
            let waiting = BlockOp {}
            var machine = make(state, running: running, waiting: waiting)
            let pendingBefore = machine.pendingDrainers
            // In a drainerPending state an extra operation waits on the ready list too.
            let effectiveReady = state.hasReady || state.drainerPending
            let canStartBefore = !machine.isSuspended && machine.runningCount < machine.width
            let label = "\(event) in \(state)"
            switch event {
            case .pushReady:
                let extra = BlockOp {}
                machine.addMember(extra)
                let requested = machine.push(ReadyLists.Entry(operation: extra, ticket: 0), priority: .normal, callerWillPoll: false)
                #expect(requested == (canStartBefore && pendingBefore == 0), "\(label)")
            case .drainerNext, .drainerNextReleasing:
                let releasing = event == .drainerNextReleasing
                if releasing && !state.full { continue }   // nothing to release
                let action = machine.next(releasingSlot: releasing)
                let mayStart = !state.suspended && (releasing || !state.full)
                if case .run(let entry, _) = action {
                    #expect(mayStart && effectiveReady, "\(label)")
                    #expect(entry.operation !== running, "\(label)")
                } else {
                    #expect(!(mayStart && effectiveReady), "\(label)")
                }
            case .releaseSlot:
                guard state.full else { continue }
                let requested = machine.releaseSlot()
                #expect(requested == (!state.suspended && effectiveReady && pendingBefore == 0), "\(label)")
                #expect(machine.runningCount == 0, "\(label)")
            case .suspend:
                let requested = machine.setSuspended(true)
                #expect(!requested, "\(label)")
                #expect(machine.isSuspended)
            case .resume:
                let requested = machine.setSuspended(false)
                #expect(requested == (!state.full && effectiveReady && pendingBefore == 0), "\(label)")
            case .widen:
                let requested = machine.setMaxConcurrentOperationCount(2)
                #expect(requested == (!state.suspended && effectiveReady && pendingBefore == 0), "\(label)")
            case .removeRunningMember:
                let action = machine.removeMember(running)
                #expect(action.departed === running, "\(label)")
                #expect(machine.operationCount == (state.hasReady ? 1 : 0) + (state.drainerPending ? 1 : 0), "\(label)")
            }
        }
    }
}
