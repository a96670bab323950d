import Testing
@testable import Operations

/// A stress run under load left an exclusive operation waiting for a turn that never came: the
/// thread starting it took its request (gate generation 0) and was preempted before it asked the
/// table; meanwhile a late dependency closed the operation's gate, finished, and the gate opened
/// again (generation 1, a new sequence number); another thread started the operation and its
/// request waited. Then the first thread asked, with the old sequence number: the table took it
/// for a new request and replaced the waiting one, and the first thread, seeing its request
/// stale, withdrew it. Nothing was left to give the operation its turn. The table now refuses a
/// request older than the one it has for the operation.
@Suite struct StaleExclusivityRequestTests {
    private final class Token {}

    private func request(_ token: Token, sequence: UInt64, category: String) -> ExclusivityStateMachine.Request {
        ExclusivityStateMachine.Request(operation: ObjectIdentifier(token), categories: [category], ancestors: [],
                                        sequence: sequence, grantsAtTurn: false)
    }

    @Test func aRequestOlderThanTheOneWaitingIsRefusedAndChangesNothing() {
        let (holder, operation) = (Token(), Token())
        let category = uniqueToken("stale")
        var machine = ExclusivityStateMachine()
        check(machine.request(request(holder, sequence: ExclusivityStateMachine.nextSequence(), category: category)))
        let old = ExclusivityStateMachine.nextSequence()
        let new = ExclusivityStateMachine.nextSequence()
        // The newer request (generation 1) is made first, and waits.
        check(!machine.request(request(operation, sequence: new, category: category)))
        // The stale one arrives: refused, the newer one still waits.
        check(!machine.request(request(operation, sequence: old, category: category)))
        #expect(machine.waitingRequest(of: ObjectIdentifier(operation))?.request.sequence == new)
        // The stale thread withdraws what it asked for: nothing, since the table knows the newer.
        #expect(!machine.knows(ObjectIdentifier(operation), sequence: old))
        // The holder gives back: the waiting request's turn comes.
        #expect(machine.releaseReturningRequests(ObjectIdentifier(holder)).turns.array.map(\.operation) == [ObjectIdentifier(operation)])
    }

    @Test func aNewerRequestReplacesAStaleOneThatWasGranted() {
        let operation = Token()
        let category = uniqueToken("stale")
        var machine = ExclusivityStateMachine()
        let old = ExclusivityStateMachine.nextSequence()
        // The stale request was granted, but its start found the gate moved on: it gives back
        // soon, and the operation's new request must not wait behind it.
        check(machine.request(request(operation, sequence: old, category: category)))
        check(machine.request(request(operation, sequence: ExclusivityStateMachine.nextSequence(), category: category)))
        #expect(!machine.knows(ObjectIdentifier(operation), sequence: old))
        #expect(machine.holders(of: category) == [ObjectIdentifier(operation)])
    }
}
