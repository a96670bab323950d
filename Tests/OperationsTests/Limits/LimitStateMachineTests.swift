import Testing
@testable import Operations

/// The counted table on its own, without threads: events in, outcomes and turns out.
@Suite struct LimitStateMachineTests {
    /// Stands for an operation.
    private final class Token {}

    private static func limit(_ category: String, _ permits: Int, interval: Duration? = nil) -> OpLimit {
        OpLimit(category: category, spec: OpLimit.Spec(permits: permits, interval: interval), clock: nil)
    }

    private static func request(_ token: Token, _ limits: [OpLimit], grantsAtTurn: Bool = false) -> LimitStateMachine.Request {
        LimitStateMachine.Request(operation: ObjectIdentifier(token), limits: limits, sequence: 0, grantsAtTurn: grantsAtTurn)
    }

    @Test func requestsBeyondThePermitsWaitAndTakeTurnsInOrder() {
        var machine = LimitStateMachine()
        let tokens = (0..<5).map { _ in Token() }
        let limits = [Self.limit("a", 2)]
        #expect(machine.request(Self.request(tokens[0], limits)) == .granted(startsIntervals: true))
        #expect(machine.request(Self.request(tokens[1], limits)) == .granted(startsIntervals: true))
        for token in tokens[2...] {
            #expect(machine.request(Self.request(token, limits)) == .waiting)
        }
        machine.release(ObjectIdentifier(tokens[1]))
        #expect(machine.takeTurns().map(\.request.operation) == [ObjectIdentifier(tokens[2])])
        // Offered: its permit is reserved; a newcomer does not take it.
        #expect(machine.permitsInUse(of: "a") == 2)
        #expect(machine.request(Self.request(tokens[2], limits)) == .granted(startsIntervals: true))
        machine.release(ObjectIdentifier(tokens[3]))   // withdrawn while it waits
        machine.release(ObjectIdentifier(tokens[0]))
        #expect(machine.takeTurns().map(\.request.operation) == [ObjectIdentifier(tokens[4])])
        machine.release(ObjectIdentifier(tokens[2]))
        machine.release(ObjectIdentifier(tokens[4]))
        #expect(machine.isIdle)
    }

    @Test func aRequestOfSeveralCategoriesTakesThemInOrderAndHoldsWhatItTookWhileItWaits() {
        var machine = LimitStateMachine()
        let (holder, other, asker) = (Token(), Token(), Token())
        #expect(machine.request(Self.request(holder, [Self.limit("b", 2), Self.limit("b2", 2)])) == .granted(startsIntervals: true))
        #expect(machine.request(Self.request(other, [Self.limit("b", 2)])) == .granted(startsIntervals: true))
        #expect(machine.request(Self.request(asker, [Self.limit("a", 2), Self.limit("b", 2)], grantsAtTurn: true)) == .waiting)
        #expect(machine.permitsInUse(of: "a") == 1, "it holds a while it waits for b")
        machine.release(ObjectIdentifier(holder))
        let turns = machine.takeTurns()
        #expect(turns.map(\.request.operation) == [ObjectIdentifier(asker)] && turns.allSatisfy(\.granted))
        #expect(machine.request(Self.request(asker, [])) == .granted(startsIntervals: false))
    }

    @Test func aRefusedRequestGivesBackWhatItTookAndLeavesNoRecord() {
        var machine = LimitStateMachine()
        let (holder, other, asker) = (Token(), Token(), Token())
        #expect(machine.request(Self.request(holder, [Self.limit("b", 2)])) == .granted(startsIntervals: true))
        #expect(machine.request(Self.request(other, [Self.limit("b", 2)])) == .granted(startsIntervals: true))
        #expect(machine.request(Self.request(asker, [Self.limit("a", 2), Self.limit("b", 2)]), mayWait: false) == .refused)
        #expect(machine.permitsInUse(of: "a") == 0 && !machine.knows(ObjectIdentifier(asker)))
    }

    @Test func aRateLimitsPermitComesBackAtTheEndOfItsIntervalNotWhenItsHolderFinishes() {
        var machine = LimitStateMachine()
        let (first, second) = (Token(), Token())
        let rate = [Self.limit("r", 1, interval: .seconds(1))]
        #expect(machine.request(Self.request(first, rate)) == .granted(startsIntervals: true))
        #expect(machine.request(Self.request(second, rate)) == .waiting)
        machine.release(ObjectIdentifier(first))
        #expect(machine.takeTurns().isEmpty)
        machine.intervalEnded("r")
        #expect(machine.takeTurns().map(\.request.operation) == [ObjectIdentifier(second)])
        // Offered, then withdrawn before it started: the permit comes back at once.
        machine.release(ObjectIdentifier(second))
        #expect(machine.isIdle)
    }

    @Test func aCategoryInUseWithOtherPermitsIsAMismatch() {
        var machine = LimitStateMachine()
        let (first, second) = (Token(), Token())
        #expect(machine.request(Self.request(first, [Self.limit("m", 2)])) == .granted(startsIntervals: true))
        let outcome = machine.request(Self.request(second, [Self.limit("m", 3)]))
        #expect(outcome == .mismatch(category: "m", inUse: OpLimit.Spec(permits: 2, interval: nil), declared: OpLimit.Spec(permits: 3, interval: nil)))
    }

    /// Work per request stays constant however many wait: N and 2N waiters, withdrawn from the
    /// middle and served from the front, visit entries in proportion.
    @Test func manyWaitersCostConstantWorkPerRequest() {
        func work(_ count: Int) -> UInt64 {
            var machine = LimitStateMachine()
            let holders = [Token(), Token()]
            let tokens = (0..<count).map { _ in Token() }
            let limits = [Self.limit("n", 2)]
            for holder in holders { _ = machine.request(Self.request(holder, limits)) }
            for token in tokens { _ = machine.request(Self.request(token, limits)) }
            for (index, token) in tokens.enumerated() where index % 3 == 1 { machine.release(ObjectIdentifier(token)) }
            for holder in holders { machine.release(ObjectIdentifier(holder)) }
            var turns = machine.takeTurns()
            var newcomers = (0..<count / 2).map { _ in Token() }
            var waiting: [Token] = []   // keeps the newcomers' identities unique
            while let turn = turns.popLast() {
                if let newcomer = newcomers.popLast() {
                    _ = machine.request(Self.request(newcomer, limits))   // waits behind
                    waiting.append(newcomer)
                }
                _ = machine.request(turn.request)
                machine.release(turn.request.operation)
                turns += machine.takeTurns()
            }
            #expect(machine.isIdle)
            return machine.work
        }
        let small = work(2_000)
        let large = work(4_000)
        #expect(large <= small * 5 / 2, "work \(small) for N, \(large) for 2N")
        #expect(small <= 8 * 2_000, "work \(small) for 2,000 waiters")
    }
}
