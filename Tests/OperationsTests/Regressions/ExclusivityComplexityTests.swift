import Testing
@testable import Operations

/// Mutual exclusivity costs the same per request however many requests wait (issue 22, defect
/// 5: 8,000 operations of one category took 4.5 s, quadratic). Checked on the state machine's own
/// count of the entries it visits, not on a clock: the same on every machine.
@Suite struct ExclusivityComplexityTests {
    /// Stands for an operation.
    private final class Token {}

    private static func request(_ token: Token, _ categories: [String], sequence: UInt64? = nil) -> ExclusivityStateMachine.Request {
        if let sequence {
            return ExclusivityStateMachine.Request(operation: ObjectIdentifier(token), categories: categories,
                                                   ancestors: [], sequence: sequence)
        }
        return ExclusivityStateMachine.Request(operation: ObjectIdentifier(token), categories: categories, ancestors: [])
    }

    /// Releases `first`, then each operation whose turn comes as soon as it comes, until `count`
    /// turns came or none does. Returns the turns in order (the last one still holds).
    private static func turns(releasing first: Token, upTo count: Int,
                              in machine: inout ExclusivityStateMachine) -> [ObjectIdentifier] {
        var order = machine.release(ObjectIdentifier(first))
        while let next = order.last, order.count < count {
            let granted = machine.release(next)
            if granted.isEmpty { break }
            order += granted
        }
        return order
    }

    @Test func manyWaitersOfOneCategoryCostConstantWorkPerRequestAndRelease() {
        let count = 5_000
        let tokens = (0..<count).map { _ in Token() }
        var machine = ExclusivityStateMachine()
        check(machine.request(Self.request(tokens[0], ["one"])))
        for token in tokens.dropFirst() {
            check(!machine.request(Self.request(token, ["one"])))
        }
        for index in 0..<count {
            let granted = machine.release(ObjectIdentifier(tokens[index]))
            check(granted == (index + 1 < count ? [ObjectIdentifier(tokens[index + 1])] : []))
        }
        #expect(machine.holders.isEmpty && machine.waiting.isEmpty)
        #expect(machine.work <= UInt64(4 * count), "visited \(machine.work) entries for \(count) requests")
    }

    @Test func withdrawalsFromTheMiddleAndRequestsOutOfOrderStayLinear() {
        let count = 4_000
        let tokens = (0..<count).map { _ in Token() }
        let holder = Token()
        var machine = ExclusivityStateMachine()
        check(machine.request(Self.request(holder, ["a", "b"])))
        // Sequence numbers handed out first, requests made in pairs swapped: nearly in order.
        let sequences = (0..<count).map { _ in ExclusivityStateMachine.nextSequence() }
        for pair in stride(from: 0, to: count, by: 2) {
            for index in [pair + 1, pair] {
                check(!machine.request(Self.request(tokens[index], index % 3 == 0 ? ["a", "b"] : ["a"], sequence: sequences[index])))
            }
        }
        // Every other waiter withdraws (cancelled), from the middle of the lines.
        for index in stride(from: 1, to: count, by: 2) {
            check(machine.release(ObjectIdentifier(tokens[index])).isEmpty)
        }
        let order = Self.turns(releasing: holder, upTo: count / 2, in: &machine)
        #expect(order == stride(from: 0, to: count, by: 2).map { ObjectIdentifier(tokens[$0]) })
        #expect(machine.work <= UInt64(8 * count), "visited \(machine.work) entries for \(count) requests")
    }

    /// Four queues, each with its own range of sequence numbers (handed out as their operations
    /// passed their conditions), ask at once, turn by turn: every request but the first queue's
    /// arrives older than many that wait already. Walking back past them was quadratic (200,000
    /// operations over four queues took minutes); the line keeps such requests in a heap.
    @Test func requestsOfSeveralQueuesAskingAtOnceStayNearLinear() {
        let queues = 4
        let perQueue = 2_500
        let count = queues * perQueue
        let tokens = (0..<count).map { _ in Token() }
        let holder = Token()
        var machine = ExclusivityStateMachine()
        check(machine.request(Self.request(holder, ["one"])))
        // Queue q's operations have sequence numbers q * perQueue + i: the ranges follow each other.
        let sequences = (0..<count).map { _ in ExclusivityStateMachine.nextSequence() }
        for index in 0..<perQueue {
            for queue in 0..<queues {
                let operation = queue * perQueue + index
                check(!machine.request(Self.request(tokens[operation], ["one"], sequence: sequences[operation])))
            }
        }
        let order = Self.turns(releasing: holder, upTo: count, in: &machine)
        #expect(order == tokens.map(ObjectIdentifier.init), "served in the order of sequence numbers")
        check(machine.release(ObjectIdentifier(tokens[count - 1])).isEmpty)
        #expect(machine.holders.isEmpty && machine.waiting.isEmpty)
        // log2(10,000) ≈ 14 levels, for each insertion into the heap and each removal from it.
        #expect(machine.work <= UInt64(40 * count), "visited \(machine.work) entries for \(count) requests")
    }

    @Test func aLongLineGivesBackItsStorageAsItEmpties() {
        let count = 20_000
        let tokens = (0..<count).map { _ in Token() }
        let holder = Token()
        var machine = ExclusivityStateMachine()
        check(machine.request(Self.request(holder, ["one"])))
        // Out of order, so that the heap takes most of them, then in order.
        let sequences = (0..<count).map { _ in ExclusivityStateMachine.nextSequence() }
        for index in (0..<count).reversed() {
            check(!machine.request(Self.request(tokens[index], ["one"], sequence: sequences[index])))
        }
        let order = Self.turns(releasing: holder, upTo: count, in: &machine)
        #expect(order.count == count)
        #expect(machine.lineCapacity(of: "one") <= 64, "the line keeps room for \(machine.lineCapacity(of: "one")) entries")
    }

    @Test func categoriesUsedOnceDoNotPileUp() {
        let token = Token()
        var machine = ExclusivityStateMachine()
        for index in 0..<10_000 {
            check(machine.request(Self.request(token, ["once-\(index)"])))
            check(machine.release(ObjectIdentifier(token)).isEmpty)
        }
        #expect(machine.keptCategoryCount <= 64, "\(machine.keptCategoryCount) categories kept")
        #expect(machine.work <= 40_000, "visited \(machine.work) entries")
    }

    /// A group that holds a category, with thousands of children of the same category (issue 22's
    /// bypasser herd: each release offered the category to every waiting child, and visited them
    /// all): one child's turn per release, constant work each.
    @Test func childrenOfAHoldingGroupTakeTheirGroupsCategoryOneTurnPerRelease() {
        let count = 5_000
        let group = Token()
        let children = (0..<count).map { _ in Token() }
        var machine = ExclusivityStateMachine()
        func child(_ token: Token) -> ExclusivityStateMachine.Request {
            ExclusivityStateMachine.Request(operation: ObjectIdentifier(token), categories: ["one"],
                                            ancestors: [ObjectIdentifier(group)], grantsAtTurn: false)
        }
        let requests = children.map(child)
        check(machine.request(Self.request(group, ["one"])))
        check(machine.request(requests[0]))
        for request in requests.dropFirst() {
            check(!machine.request(request))
        }
        var turns = 0
        for index in 0..<count {
            let offered = machine.releaseReturningRequests(ObjectIdentifier(children[index])).turns.array.map(\.operation)
            turns += offered.count
            guard index + 1 < count else {
                check(offered.isEmpty)
                break
            }
            check(offered == [ObjectIdentifier(children[index + 1])], "release \(index) offered \(offered.count) turns")
            // The child takes what it was offered, as its queue starts it.
            check(machine.requestAgain(requests[index + 1].operation, sequence: requests[index + 1].sequence) == true)
        }
        #expect(turns == count - 1)
        check(machine.release(ObjectIdentifier(group)).isEmpty)
        #expect(machine.holders.isEmpty && machine.waiting.isEmpty)
        #expect(machine.work <= UInt64(4 * count), "visited \(machine.work) entries for \(count) requests")
    }
}
