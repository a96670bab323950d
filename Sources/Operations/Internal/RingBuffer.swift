/// A growable first-in, first-out buffer with amortised O(1) `append` and `popFirst`.
///
/// A small stand-in for `Deque` that keeps the library free of dependencies. Its storage doubles
/// when full and halves when a quarter full (down to ``NarrowedCounters/ringBufferMinimumCapacity``),
/// so a buffer that was once long (a burst of ready operations, of jobs) does not keep that
/// memory for good: its capacity follows what it holds now.
struct RingBuffer<Element> {
    private var storage: [Element?] = []
    private var head = 0
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    /// Adds an element at the back.
    /// - Complexity: Amortised O(1).
    mutating func append(_ element: Element) {
        if count == storage.count {
            grow()
        }
        var index = head + count
        if index >= storage.count { index -= storage.count }
        storage[index] = element
        count += 1
    }

    /// Removes and returns the element at the front, or `nil` when empty.
    /// - Complexity: Amortised O(1).
    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head].take()
        head += 1
        if head == storage.count { head = 0 }
        count -= 1
        if count == 0 { head = 0 }
        if count <= storage.count / 4 && storage.count > NarrowedCounters.ringBufferMinimumCapacity {
            shrink()
        }
        return element
    }

    /// The number of elements the buffer has room for without growing.
    var capacity: Int { storage.count }

    /// The element at the front, or `nil` when empty.
    var first: Element? {
        count > 0 ? storage[head] : nil
    }

    /// The elements from front to back.
    var elements: [Element] {
        var result: [Element] = []
        result.reserveCapacity(count)
        var index = head
        for _ in 0..<count {
            result.append(storage[index]!)
            index += 1
            if index == storage.count { index = 0 }
        }
        return result
    }

    /// Removes every element, returning them front to back.
    mutating func removeAll() -> [Element] {
        let result = elements
        self = RingBuffer()
        return result
    }

    /// Doubles the capacity.
    private mutating func grow() {
        resize(to: Swift.max(NarrowedCounters.ringBufferMinimumCapacity, storage.count * 2))
    }

    /// Halves the capacity (the buffer is at most a quarter full).
    @inline(never)
    private mutating func shrink() {
        resize(to: Swift.max(NarrowedCounters.ringBufferMinimumCapacity, storage.count / 2))
    }

    /// Moves the elements (front first) to the start of new storage of `newCapacity` slots
    /// (at least `count`) with two block moves: no element is copied, retained or released.
    private mutating func resize(to newCapacity: Int) {
        let oldCapacity = storage.count
        let (count, head) = (self.count, self.head)
        let firstPart = Swift.min(count, oldCapacity - head)
        let secondPart = count - firstPart
        let grown = storage.withUnsafeMutableBufferPointer { old in
            [Element?](unsafeUninitializedCapacity: newCapacity) { new, initialized in
                let base = new.baseAddress!
                if count > 0, let oldBase = old.baseAddress {
                    base.moveInitialize(from: oldBase + head, count: firstPart)
                    (base + firstPart).moveInitialize(from: oldBase, count: secondPart)
                    // The old slots are uninitialized now: the old storage is freed with nils.
                    (oldBase + head).initialize(repeating: nil, count: firstPart)
                    oldBase.initialize(repeating: nil, count: secondPart)
                }
                (base + count).initialize(repeating: nil, count: newCapacity - count)
                initialized = newCapacity
            }
        }
        storage = grown
        self.head = 0
    }
}
