/// Elements served oldest first by sequence number, whatever order they arrive in: the line of
/// requests waiting for one exclusivity category (see ``ExclusivityStateMachine``).
///
/// Elements mostly arrive in order (one queue's operations ask in the order their conditions
/// passed), and those go to the back of a sorted *run*: O(1) to add and to serve. Elements that
/// arrive out of order (several queues asking at once, each in its own range of numbers) go to a
/// binary min-heap beside it: O(log n) each. The oldest element is the older of the run's front
/// and the heap's top. Every mutating method returns the number of entries it moved or compared
/// (the machine's measure of its work).
///
/// The storage shrinks with its content: it holds what waits now, not what waited once.
struct SequenceLine<Element: SequenceOrdered> {
    /// Elements in order of sequence number; those before `runStart` are gone.
    private var run: [Element] = []
    private var runStart = 0
    /// Elements that arrived older than the run's back, as a binary min-heap.
    private var heap: [Element] = []

    /// How many elements wait.
    var count: Int { run.count - runStart + heap.count }

    var isEmpty: Bool { runStart == run.count && heap.isEmpty }

    /// The oldest element.
    var first: Element? {
        firstIsInRun ? run[runStart] : heap.first
    }

    /// Whether the oldest element is the run's front (on a tie, which a request asking again
    /// with the number of its withdrawn one makes, the run's: `first` and `removeFirst` agree).
    private var firstIsInRun: Bool {
        guard runStart < run.count else { return false }
        guard let top = heap.first else { return true }
        return !(top.sequenceNumber < run[runStart].sequenceNumber)
    }

    /// How many elements the storage has room for (for tests).
    var capacity: Int { run.capacity + heap.capacity }

    /// Every element, in no particular order.
    var elements: [Element] { Array(run[runStart...]) + heap }

    /// Adds `element`. Returns the work done.
    @discardableResult
    mutating func append(_ element: Element) -> Int {
        if runStart == run.count || run[run.count - 1].sequenceNumber < element.sequenceNumber {
            run.append(element)
            return 1
        }
        heap.append(element)
        return 1 + siftUp(heap.count - 1)
    }

    /// Removes the oldest element (there must be one). Returns the work done.
    @discardableResult
    mutating func removeFirst() -> Int {
        if firstIsInRun {
            runStart += 1
            if runStart == run.count {
                run.removeAll(keepingCapacity: run.capacity <= Self.keptCapacity)
                runStart = 0
            } else if runStart > 32, runStart * 2 > run.count {
                run = Array(run[runStart...])   // a copy: storage the size of what waits
                runStart = 0
            }
            return 1
        }
        let last = heap.removeLast()
        var work = 1
        if !heap.isEmpty {
            heap[0] = last
            work += siftDown(0)
        }
        shrinkHeapIfSparse()
        return work
    }

    /// Removes every element that `shouldBeRemoved`. O(n). Returns the work done.
    @discardableResult
    mutating func removeAll(where shouldBeRemoved: (Element) -> Bool) -> Int {
        let work = count
        run = run[runStart...].filter { !shouldBeRemoved($0) }
        runStart = 0
        heap = heap.filter { !shouldBeRemoved($0) }
        // Floyd's construction: O(n).
        var index = heap.count / 2
        while index > 0 {
            index -= 1
            _ = siftDown(index)
        }
        return work
    }

    /// Whether the run is sorted and the heap is a min-heap (ties allowed) (for the checked build
    /// and tests).
    var isOrdered: Bool {
        let live = run[runStart...]
        guard zip(live, live.dropFirst()).allSatisfy({ $0.sequenceNumber < $1.sequenceNumber }) else { return false }
        return heap.indices.dropFirst().allSatisfy { !(heap[$0].sequenceNumber < heap[($0 - 1) / 2].sequenceNumber) }
    }

    // MARK: Heap

    /// Below this capacity, storage is kept when emptied; above it, it goes with its elements.
    private static var keptCapacity: Int { 64 }

    private mutating func siftUp(_ start: Int) -> Int {
        var index = start
        var work = 0
        let element = heap[index]
        while index > 0 {
            let parent = (index - 1) / 2
            work += 1
            guard element.sequenceNumber < heap[parent].sequenceNumber else { break }
            heap[index] = heap[parent]
            index = parent
        }
        heap[index] = element
        return work
    }

    private mutating func siftDown(_ start: Int) -> Int {
        var index = start
        var work = 0
        let element = heap[index]
        while true {
            var child = 2 * index + 1
            guard child < heap.count else { break }
            if child + 1 < heap.count, heap[child + 1].sequenceNumber < heap[child].sequenceNumber { child += 1 }
            work += 1
            guard heap[child].sequenceNumber < element.sequenceNumber else { break }
            heap[index] = heap[child]
            index = child
        }
        heap[index] = element
        return work
    }

    /// Gives back the heap's storage once it is mostly empty (amortised O(1)).
    private mutating func shrinkHeapIfSparse() {
        if heap.isEmpty {
            heap.removeAll(keepingCapacity: heap.capacity <= Self.keptCapacity)
        } else if heap.capacity > Self.keptCapacity, heap.count * 4 < heap.capacity {
            heap = heap.withUnsafeBufferPointer { Array($0) }   // a copy: storage the size of what waits
        }
    }
}
