import Testing
@testable import Operations

/// The list behind an operation's dependencies and dependents: its first element inline, the
/// rest in an array.
@Suite struct SmallListTests {
    @Test func elementsKeepTheOrderTheyWereAppendedIn() {
        var list = SmallList<Int>()
        #expect(list.isEmpty && list.count == 0 && list.array.isEmpty)
        for value in 1...4 { list.append(value) }
        #expect(!list.isEmpty && list.count == 4)
        #expect(list.array == [1, 2, 3, 4])
        #expect(Array(list) == [1, 2, 3, 4])
    }

    @Test func movingAllElementsAppendsThemInOrderAndEmptiesTheList() {
        var target = [0]
        var empty = SmallList<Int>()
        empty.moveAll(into: &target)
        #expect(target == [0] && empty.isEmpty)
        var one = SmallList<Int>()
        one.append(1)
        one.moveAll(into: &target)
        #expect(target == [0, 1] && one.isEmpty && one.count == 0)
        var several = SmallList<Int>()
        for value in 2...5 { several.append(value) }
        several.moveAll(into: &target)
        #expect(target == [0, 1, 2, 3, 4, 5] && several.isEmpty && several.array.isEmpty)
        several.append(6)   // still usable: the inline element first again
        #expect(several.array == [6])
    }

    @Test func removingTheFirstMatchKeepsTheOrderOfTheOthers() {
        var list = SmallList<Int>()
        for value in [1, 2, 3, 2] { list.append(value) }
        #expect(list.removeFirst { $0 == 2 } == 2)
        #expect(list.array == [1, 3, 2])
        #expect(list.removeFirst { $0 == 1 } == 1)   // the inline element: the next moves up
        #expect(list.array == [3, 2])
        #expect(list.removeFirst { $0 == 9 } == nil)
        #expect(list.array == [3, 2])
    }

    @Test func positionsCountFromTheInlineElementAndRemovalByPositionKeepsTheOrder() {
        var list = SmallList<Int>()
        #expect(list.firstIndex { _ in true } == nil)
        for value in [5, 6, 7, 6] { list.append(value) }
        #expect(list.firstIndex { $0 == 5 } == 0)
        #expect(list.firstIndex { $0 == 6 } == 1)
        #expect(list.firstIndex { $0 == 9 } == nil)
        #expect(list.remove(at: 2) == 7)
        #expect(list.array == [5, 6, 6])
        #expect(list.remove(at: 0) == 5)   // the inline element: the next moves up
        #expect(list.array == [6, 6])
        #expect(list.remove(at: 1) == 6)
        #expect(list.remove(at: 0) == 6)
        #expect(list.isEmpty)
    }
}
