import Testing
@testable import Operations

/// What keeps a request for exclusivity categories waiting, as the dump reports it: the exclusivity
/// state machine answered directly, without threads.
@Suite struct DumpExclusivityBlockerTests {
    private final class Token {}
    private typealias Machine = ExclusivityStateMachine
    private typealias Blocker = ExclusivityStateMachine.Blocker

    private let tokens = (0..<5).map { _ in Token() }
    private var ids: [ObjectIdentifier] { tokens.map(ObjectIdentifier.init) }

    private func request(_ index: Int, _ categories: [String], ancestors: [Int] = []) -> Machine.Request {
        Machine.Request(operation: ids[index], categories: categories.sorted(), ancestors: Set(ancestors.map { ids[$0] }))
    }

    @Test func aHeldCategoryNamesItsHolderAndAFreeReservedOneTheEarlierRequest() {
        var machine = Machine()
        let (holder, both, later) = (0, 1, 2)
        check(machine.request(request(holder, ["y"])))
        check(!machine.request(request(both, ["x", "y"])))
        check(!machine.request(request(later, ["x"])))
        #expect(machine.blockers(of: ids[holder]) == nil, "a holder does not wait")
        #expect(machine.blockers(of: ids[both]) == [Blocker(category: "y", holders: [ids[holder]], earlierRequests: [])])
        #expect(machine.blockers(of: ids[later]) == [Blocker(category: "x", holders: [], earlierRequests: [ids[both]])])
        // The holder leaves: the older request takes both categories, and the later one waits
        // for it as a holder now.
        check(machine.release(ids[holder]) == [ids[both]])
        #expect(machine.blockers(of: ids[both]) == nil)
        #expect(machine.blockers(of: ids[later]) == [Blocker(category: "x", holders: [ids[both]], earlierRequests: [])])
        #expect(machine.blockers(of: ids[3]) == nil, "an operation that never asked does not wait")
    }

    @Test func aGroupHoldingACategoryDoesNotBlockItsChildrenButASiblingDoes() {
        var machine = Machine()
        let (group, child, sibling) = (0, 1, 2)
        check(machine.request(request(group, ["db"])))
        check(machine.request(request(child, ["db"], ancestors: [group])))
        check(!machine.request(request(sibling, ["db"], ancestors: [group])))
        #expect(machine.blockers(of: ids[sibling]) == [Blocker(category: "db", holders: [ids[child]], earlierRequests: [])],
                "the group, an ancestor, is not named")
    }
}
