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
        var order: [ObjectIdentifier] = []
        order += machine.release(ObjectIdentifier(holder))
        while let next = order.last, order.count < count / 2 {
            let granted = machine.release(next)
            if granted.isEmpty { break }
            order += granted
        }
        #expect(order == stride(from: 0, to: count, by: 2).map { ObjectIdentifier(tokens[$0]) })
        #expect(machine.work <= UInt64(8 * count), "visited \(machine.work) entries for \(count) requests")
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
}
