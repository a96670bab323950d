import Testing
@testable import Operations

/// The first-in, first-out buffer behind ready lists and the worker pool's job queue.
@Suite struct RingBufferTests {
    private final class Tracked {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    @Test func elementsComeOutInTheOrderTheyWentInAcrossGrowthWithAWrappedFront() {
        var buffer = RingBuffer<Int>()
        var expected: [Int] = []
        var next = 0
        // Pop some before pushing more, so that the front is in the middle when it grows.
        for round in 0..<6 {
            for _ in 0..<(5 + round * 7) {
                buffer.append(next)
                expected.append(next)
                next += 1
            }
            for _ in 0..<(3 + round) {
                #expect(buffer.popFirst() == expected.removeFirst())
            }
            #expect(buffer.count == expected.count)
            #expect(buffer.elements == expected)
            #expect(buffer.first == expected.first)
        }
        #expect(buffer.removeAll() == expected)
        #expect(buffer.isEmpty && buffer.popFirst() == nil)
    }

    @Test func growingMovesElementsWithoutLosingOrDuplicatingAReference() {
        weak var firstPopped: Tracked?
        weak var stillInside: Tracked?
        var buffer = RingBuffer<Tracked>()
        for value in 0..<5 { buffer.append(Tracked(value)) }
        do {
            let popped = buffer.popFirst()
            firstPopped = popped
            #expect(popped?.value == 0)
        }
        #expect(firstPopped == nil)   // the buffer kept no copy
        for value in 5..<40 { buffer.append(Tracked(value)) }   // grows twice, front wrapped
        stillInside = buffer.first
        #expect(stillInside?.value == 1)
        #expect(buffer.elements.map(\.value) == Array(1..<40))
        _ = buffer.removeAll()
        #expect(stillInside == nil)   // released exactly once, by the buffer that held it
    }

    @Test func aCopySharesNothingThatTheOtherChanges() {
        weak var shared: Tracked?
        var original = RingBuffer<Tracked>()
        for value in 0..<6 { original.append(Tracked(value)) }
        _ = original.popFirst()   // the front is off the start of the storage
        shared = original.first
        var copy = original
        copy.append(Tracked(6))          // the copy gets storage of its own
        _ = original.popFirst()
        original.append(Tracked(60))
        #expect(copy.elements.map(\.value) == [1, 2, 3, 4, 5, 6])
        #expect(original.elements.map(\.value) == [2, 3, 4, 5, 60])
        // Popping a shared buffer leaves the other untouched as well, through growth.
        var other = copy
        while other.popFirst() != nil {}
        for value in 100..<140 { other.append(Tracked(value)) }
        #expect(copy.elements.map(\.value) == [1, 2, 3, 4, 5, 6])
        #expect(other.elements.map(\.value) == Array(100..<140))
        #expect(shared != nil)   // still in `copy`
        _ = copy.removeAll()
        #expect(shared == nil)   // released once both let it go
    }
}
