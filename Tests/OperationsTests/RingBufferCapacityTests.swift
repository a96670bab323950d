import Testing
@testable import Operations

/// A ring buffer gives memory back as it empties (issue 22, defect 3: a queue's ready lists, and
/// the worker pool's jobs, keep memory in proportion to what they hold now). In the checked build
/// its smallest capacity is one slot, so every wrap and resize path runs.
@Suite struct RingBufferCapacityTests {
    private final class Tracked {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    @Test func theCapacityFollowsTheCountDownAsWellAsUp() {
        var buffer = RingBuffer<Int>()
        for value in 0..<10_000 { buffer.append(value) }
        #expect(buffer.capacity >= 10_000 && buffer.capacity <= 20_000)
        for value in 0..<9_990 { #expect(buffer.popFirst() == value) }
        #expect(buffer.capacity <= 4 * 10 + 2 * NarrowedCounters.ringBufferMinimumCapacity, "\(buffer.capacity)")
        #expect(buffer.elements == Array(9_990..<10_000))
        while buffer.popFirst() != nil {}
        #expect(buffer.capacity <= NarrowedCounters.ringBufferMinimumCapacity * 2)
    }

    @Test func shrinkingKeepsTheOrderAndEveryReferenceAtEveryFrontPosition() {
        // Every front position of small buffers, through growth and shrinking alike.
        for size in [1, 2, 3, 5, 9, 17, 40] {
            for offset in 0..<size {
                var buffer = RingBuffer<Tracked>()
                var expected: [Int] = []
                var next = 0
                for _ in 0..<offset {
                    buffer.append(Tracked(next)); next += 1
                    _ = buffer.popFirst()
                }
                for _ in 0..<size {
                    buffer.append(Tracked(next)); expected.append(next); next += 1
                }
                weak let last: Tracked? = buffer.elements.last
                while expected.count > 1 {
                    #expect(buffer.popFirst()?.value == expected.removeFirst())
                    #expect(buffer.elements.map(\.value) == expected, "size \(size), offset \(offset)")
                    #expect(buffer.capacity >= buffer.count)
                }
                #expect(last != nil)
                _ = buffer.removeAll()
                #expect(last == nil, "released exactly once, size \(size), offset \(offset)")
            }
        }
    }
}
