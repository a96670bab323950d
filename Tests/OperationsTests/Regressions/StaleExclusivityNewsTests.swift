import Testing
@testable import Operations

/// The news of an exclusivity request (its turn came, or it stepped aside because its queue was
/// suspended) is delivered after the table's lock is released, so it can arrive late. A stress
/// run under load showed two operations of one category running at once: the turn of a request
/// withdrawn when its queue was suspended reached the operation while it asked again after the
/// queue resumed, and was taken for the turn of the new request. The operation was scheduled a
/// second time, its two starts each asked, and one gave back the categories the other ran with.
/// Each request is now numbered (its attempt), and news of an earlier one is ignored.
@Suite struct StaleExclusivityNewsTests {
    /// An exclusive operation in `queue`, as far as its state machine goes: enqueued and
    /// scheduled, its gate passed.
    private func exclusiveMachine(in queue: OpQueue) -> (OpStateMachine, ticket: Op.Ticket) {
        var machine = OpStateMachine()
        check(machine.addCondition(.mutuallyExclusive(uniqueToken("news"))))
        guard case .schedule(let schedule) = machine.enqueue(in: queue) else {
            Issue.record("an exclusive operation with nothing to evaluate is scheduled at once")
            return (machine, 0)
        }
        return (machine, schedule.ticket)
    }

    @Test func theTurnOfAWithdrawnRequestDoesNotScheduleTheOperationAsItAsksAgain() {
        let queue = OpQueue()
        var (machine, ticket) = exclusiveMachine(in: queue)
        // First start: it asks (attempt 1) and waits.
        guard case .takeCategories(let first) = machine.startFromQueue(ticket: ticket) else {
            Issue.record("the first start does not ask for the categories")
            return
        }
        // Its queue is suspended: the request is withdrawn, the operation steps aside.
        guard case .schedule(_, let again) = machine.exclusivitySteppedAside(generation: first.generation, attempt: first.attempt) else {
            Issue.record("stepping aside does not schedule the operation again")
            return
        }
        // The queue resumed and starts it again: it asks again (attempt 2).
        guard case .takeCategories(let second) = machine.startFromQueue(ticket: again.ticket) else {
            Issue.record("the second start does not ask for the categories")
            return
        }
        #expect(second.attempt != first.attempt)
        // The turn of the first request arrives now: ignored.
        #expect(machine.exclusivityTurnCame(generation: first.generation, attempt: first.attempt) == .none)
        #expect(machine.exclusivitySteppedAside(generation: first.generation, attempt: first.attempt) == .none)
        // The turn of the second one schedules it.
        if case .schedule = machine.exclusivityTurnCame(generation: second.generation, attempt: second.attempt) {
        } else {
            Issue.record("the turn of the current request does not schedule the operation")
        }
    }
}
