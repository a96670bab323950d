import Testing
@testable import Operations

/// Stands for an operation: its identity is all the machine sees.
private final class Dummy {}

/// Fake operations for the machine, kept alive (so their identifiers stay unique) by the fixture.
private struct Fixture {
    let objects = (0..<8).map { _ in Dummy() }

    /// The identity of fake operation `index`.
    func id(_ index: Int) -> ObjectIdentifier {
        ObjectIdentifier(objects[index])
    }

    /// A request of fake operation `index` for `categories`, nested in the groups `ancestors`.
    func request(_ index: Int, _ categories: [String], ancestors: [Int] = []) -> ExclusivityStateMachine.Request {
        ExclusivityStateMachine.Request(operation: id(index), categories: categories.sorted(),
                                        ancestors: Set(ancestors.map(id)))
    }
}

@Suite struct ExclusivityStateMachineTests {
    @Test func freeCategoryIsGrantedAndAHeldOneMakesTheRequestWait() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        check(machine.request(f.request(0, ["x"])))
        #expect(machine.holders(of: "x") == [f.id(0)])
        check(!machine.request(f.request(1, ["x"])))
        #expect(machine.waiting.map(\.operation) == [f.id(1)])
        #expect(machine.holders(of: "x") == [f.id(0)])
        let granted = machine.release(f.id(0))
        #expect(granted == [f.id(1)])
        #expect(machine.holders(of: "x") == [f.id(1)])
        #expect(machine.waiting.isEmpty)
        check(machine.release(f.id(1)).isEmpty)
        #expect(machine.holders.isEmpty)
    }

    @Test func otherCategoriesAreUnaffected() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        check(machine.request(f.request(0, ["x"])))
        check(!machine.request(f.request(1, ["x"])))
        check(machine.request(f.request(2, ["y"])))
        #expect(machine.holders(of: "y") == [f.id(2)])
    }

    @Test func requestForTwoCategoriesIsAllOrNone() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        check(machine.request(f.request(0, ["x"])))
        check(!machine.request(f.request(1, ["x", "y"])))
        // Waiting, it holds nothing: y is still free of holders.
        #expect(machine.holders(of: "y").isEmpty)
        check(machine.release(f.id(0)) == [f.id(1)])
        #expect(machine.holders(of: "x") == [f.id(1)])
        #expect(machine.holders(of: "y") == [f.id(1)])
        check(machine.release(f.id(1)).isEmpty)
        #expect(machine.holders.isEmpty)
    }

    @Test func holderOfTwoCategoriesExcludesRequestsForEither() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        check(machine.request(f.request(0, ["x", "y"])))
        check(!machine.request(f.request(1, ["x"])))
        check(!machine.request(f.request(2, ["y"])))
        check(machine.release(f.id(0)) == [f.id(1), f.id(2)])
    }

    @Test func laterRequestWaitsBehindAnEarlierWaiterEvenIfItCouldGo() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        check(machine.request(f.request(0, ["x"])))
        check(!machine.request(f.request(1, ["x", "y"])))
        // y is free, but reserved by the earlier waiter.
        check(!machine.request(f.request(2, ["y"])))
        #expect(machine.holders(of: "y").isEmpty)
        #expect(machine.waiting.map(\.operation) == [f.id(1), f.id(2)])
        check(machine.release(f.id(0)) == [f.id(1)])
        #expect(machine.waiting.map(\.operation) == [f.id(2)])
        check(machine.release(f.id(1)) == [f.id(2)])
        #expect(machine.holders(of: "y") == [f.id(2)])
    }

    @Test func reservationsHoldWhenGrantingWaitersToo() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        check(machine.request(f.request(0, ["x"])))
        check(machine.request(f.request(1, ["z"])))
        check(!machine.request(f.request(2, ["x", "z"])))
        check(!machine.request(f.request(3, ["x"])))
        // x is free now, but the older waiter (2) still needs z: it keeps x reserved.
        check(machine.release(f.id(0)).isEmpty)
        #expect(machine.holders(of: "x").isEmpty)
        check(machine.release(f.id(1)) == [f.id(2)])
        check(machine.release(f.id(2)) == [f.id(3)])
    }

    @Test func requestNestedUnderTheHolderIsGranted() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        // 0 is a group holding x; 1 is its child.
        check(machine.request(f.request(0, ["x"])))
        check(machine.request(f.request(1, ["x"], ancestors: [0])))
        #expect(machine.holders(of: "x") == [f.id(0), f.id(1)])
        check(machine.release(f.id(1)).isEmpty)
        #expect(machine.holders(of: "x") == [f.id(0)])
    }

    @Test func nestedRequestGoesAheadOfAnOutsideWaiter() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        check(machine.request(f.request(0, ["x"])))
        check(!machine.request(f.request(5, ["x"])))
        // The child of the holder is not queued behind the outsider (that would deadlock).
        check(machine.request(f.request(1, ["x"], ancestors: [0])))
        #expect(machine.holders(of: "x") == [f.id(0), f.id(1)])
        check(machine.release(f.id(1)).isEmpty)
        check(machine.release(f.id(0)) == [f.id(5)])
    }

    @Test func grandchildIsGrantedUnderAnAncestorHolder() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        // 0 holds x; 2 is a child of group 1, itself a child of 0.
        check(machine.request(f.request(0, ["x"])))
        check(machine.request(f.request(2, ["x"], ancestors: [1, 0])))
        #expect(machine.holders(of: "x") == [f.id(0), f.id(2)])
    }

    @Test func requestOfAnUnrelatedOperationIsNotNested() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        check(machine.request(f.request(0, ["x"])))
        // Nested in some other group (3), not in the holder.
        check(!machine.request(f.request(1, ["x"], ancestors: [3])))
    }

    @Test func siblingsUnderTheSameHolderExcludeEachOther() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        check(machine.request(f.request(0, ["x"])))
        check(machine.request(f.request(1, ["x"], ancestors: [0])))
        check(!machine.request(f.request(2, ["x"], ancestors: [0])))
        check(machine.release(f.id(1)) == [f.id(2)])
        #expect(machine.holders(of: "x") == [f.id(0), f.id(2)])
        check(machine.release(f.id(2)).isEmpty)
        #expect(machine.holders(of: "x") == [f.id(0)])
        check(machine.release(f.id(0)).isEmpty)
        #expect(machine.holders.isEmpty)
    }

    @Test func siblingsUnderTheSameHolderAreServedInTheOrderTheyAsked() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        check(machine.request(f.request(0, ["x"])))
        check(machine.request(f.request(1, ["x"], ancestors: [0])))
        check(!machine.request(f.request(2, ["x"], ancestors: [0])))
        check(!machine.request(f.request(3, ["x"], ancestors: [0])))
        check(machine.release(f.id(1)) == [f.id(2)])
        check(machine.release(f.id(2)) == [f.id(3)])
        check(machine.release(f.id(3)).isEmpty)
        #expect(machine.holders(of: "x") == [f.id(0)])
    }

    @Test func aSiblingAskingWhileAnotherIsOfferedItsTurnWaitsBehindIt() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        check(machine.request(f.request(0, ["x"])))
        check(machine.request(f.request(1, ["x"], ancestors: [0])))
        let offered = ExclusivityStateMachine.Request(operation: f.id(2), categories: ["x"],
                                                      ancestors: [f.id(0)], grantsAtTurn: false)
        check(!machine.request(offered))
        check(machine.release(f.id(1)) == [f.id(2)])
        // 2 was offered the category and has not taken it yet: 3, asking later, waits.
        check(!machine.request(f.request(3, ["x"], ancestors: [0])))
        check(machine.requestAgain(f.id(2), sequence: offered.sequence) == true)
        check(machine.release(f.id(2)) == [f.id(3)])
    }

    @Test func aWaitingGrandchildRunsUnderItsParentGroupOnceThatHolds() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        // 0 holds x; 1, its child, holds x too; 2 (a child group of 0) and then 3 (2's child) wait.
        check(machine.request(f.request(0, ["x"])))
        check(machine.request(f.request(1, ["x"], ancestors: [0])))
        check(!machine.request(f.request(2, ["x"], ancestors: [0])))
        check(!machine.request(f.request(3, ["x"], ancestors: [2, 0])))
        // 1 gives back: 2's turn; holding, 2 is 3's innermost holder: 3 runs under it.
        check(machine.release(f.id(1)) == [f.id(2), f.id(3)])
        #expect(machine.holders(of: "x") == [f.id(0), f.id(2), f.id(3)])
    }

    @Test func aGroupGivingBackWhileItsChildrenWaitLeavesThemToItsOwnHolder() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        // 0 holds x; its child group 1 holds x; 1's children 2 (holding) and 3 (waiting).
        check(machine.request(f.request(0, ["x"])))
        check(machine.request(f.request(1, ["x"], ancestors: [0])))
        check(machine.request(f.request(2, ["x"], ancestors: [1, 0])))
        check(!machine.request(f.request(3, ["x"], ancestors: [1, 0])))
        // 1 gives back (it was cancelled, say) while 2 holds: 3 now waits under 0, behind 2.
        check(machine.release(f.id(1)).isEmpty)
        #expect(machine.holders(of: "x") == [f.id(0), f.id(2)])
        check(machine.release(f.id(2)) == [f.id(3)])
        #expect(machine.holders(of: "x") == [f.id(0), f.id(3)])
    }

    @Test func childWithACategoryItsGroupDoesNotHoldIsNotNested() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        check(machine.request(f.request(0, ["x"])))
        check(machine.request(f.request(4, ["y"])))
        // A child of 0 asking for x and y: x is its group's, y is someone else's.
        check(!machine.request(f.request(1, ["x", "y"], ancestors: [0])))
        #expect(machine.holders(of: "x") == [f.id(0)])
        check(machine.release(f.id(4)) == [f.id(1)])
        #expect(machine.holders(of: "x") == [f.id(0), f.id(1)])
        #expect(machine.holders(of: "y") == [f.id(1)])
    }

    @Test func releasingAWaitingRequestWithdrawsIt() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        check(machine.request(f.request(0, ["x"])))
        check(!machine.request(f.request(1, ["x"])))
        check(!machine.request(f.request(2, ["x"])))
        check(machine.release(f.id(1)).isEmpty)
        #expect(machine.waiting.map(\.operation) == [f.id(2)])
        #expect(machine.holders(of: "x") == [f.id(0)])
        check(machine.release(f.id(0)) == [f.id(2)])
    }

    @Test func withdrawingAWaitingRequestFreesItsReservation() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        check(machine.request(f.request(0, ["x"])))
        check(!machine.request(f.request(1, ["x", "y"])))
        check(!machine.request(f.request(2, ["y"])))
        check(machine.release(f.id(1)) == [f.id(2)])
        #expect(machine.holders(of: "y") == [f.id(2)])
        #expect(machine.holders(of: "x") == [f.id(0)])
    }

    @Test func releaseReturnsTheGrantsInTheOrderTheyWereRequested() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        check(machine.request(f.request(0, ["w", "x", "y", "z"])))
        check(!machine.request(f.request(3, ["y"])))
        check(!machine.request(f.request(1, ["x"])))
        check(!machine.request(f.request(4, ["x"])))
        check(!machine.request(f.request(2, ["z", "w"])))
        check(machine.release(f.id(0)) == [f.id(3), f.id(1), f.id(2)])
        #expect(machine.waiting.map(\.operation) == [f.id(4)])
        #expect(machine.holders(of: "w") == [f.id(2)])
        #expect(machine.holders(of: "z") == [f.id(2)])
    }

    @Test func releasingAnUnknownOperationChangesNothing() {
        let f = Fixture()
        var machine = ExclusivityStateMachine()
        check(machine.request(f.request(0, ["x"])))
        check(!machine.request(f.request(1, ["x"])))
        check(machine.release(f.id(7)).isEmpty)
        #expect(machine.holders(of: "x") == [f.id(0)])
        #expect(machine.waiting.map(\.operation) == [f.id(1)])
    }
}
