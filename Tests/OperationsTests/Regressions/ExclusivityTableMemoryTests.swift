import Testing
@testable import Operations

/// The exclusivity table keeps an operation alive only while its request waits or holds: a
/// withdrawn request whose entry is still in a category's line, and a category used once, keep
/// nothing.
@Suite struct ExclusivityTableMemoryTests {
    private final class Token {}
    private final class Payload {}

    private final class WeakBox {
        weak var object: Payload?
    }

    private static func request(_ token: Token, _ categories: [String], payload: Payload? = nil) -> ExclusivityStateMachine.Request {
        ExclusivityStateMachine.Request(operation: ObjectIdentifier(token), categories: categories, ancestors: [],
                                        payload: payload)
    }

    @Test func aWithdrawnRequestInTheMiddleOfALineKeepsNothingAlive() {
        let tokens = (0..<4).map { _ in Token() }
        var machine = ExclusivityStateMachine()
        let weak = WeakBox()
        check(machine.request(Self.request(tokens[0], ["line"])))
        check(!machine.request(Self.request(tokens[1], ["line"])))
        do {
            let payload = Payload()
            weak.object = payload
            check(!machine.request(Self.request(tokens[2], ["line"], payload: payload)))
        }
        check(!machine.request(Self.request(tokens[3], ["line"])))
        #expect(weak.object != nil, "kept while it waits")
        // Withdrawn from the middle: its entry stays in the line until the front reaches it.
        check(machine.release(ObjectIdentifier(tokens[2])).isEmpty)
        #expect(weak.object == nil, "a dead entry keeps its payload")
        check(machine.release(ObjectIdentifier(tokens[0])) == [ObjectIdentifier(tokens[1])])
        check(machine.release(ObjectIdentifier(tokens[1])) == [ObjectIdentifier(tokens[3])])
    }

    @Test func aGrantedRequestKeepsItsPayloadUntilItIsGivenBack() {
        let token = Token()
        var machine = ExclusivityStateMachine()
        let weak = WeakBox()
        do {
            let payload = Payload()
            weak.object = payload
            check(machine.request(Self.request(token, ["held"], payload: payload)))
        }
        #expect(weak.object != nil)
        #expect(machine.payload(of: ObjectIdentifier(token)) === weak.object)
        let (released, turns) = machine.releaseReturningRequests(ObjectIdentifier(token))
        #expect(turns.isEmpty)
        #expect(released === weak.object)
        withExtendedLifetime(released) {}
    }
}
