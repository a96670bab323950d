/// A growable first-in, first-out buffer with amortised O(1) `append` and `popFirst`.
///
/// A small stand-in for `Deque` that keeps the library free of dependencies.
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
    /// - Complexity: O(1).
    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head].take()
        head += 1
        if head == storage.count { head = 0 }
        count -= 1
        if count == 0 { head = 0 }
        return element
    }

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

    /// Doubles the capacity, moving the elements (front first) to the start of the new storage
    /// with two block moves: no element is copied, retained or released.
    private mutating func grow() {
        let oldCapacity = storage.count
        let newCapacity = Swift.max(8, oldCapacity * 2)
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
