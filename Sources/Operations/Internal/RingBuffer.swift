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

    private mutating func grow() {
        let newCapacity = Swift.max(8, storage.count * 2)
        var newStorage = [Element?](repeating: nil, count: newCapacity)
        var index = head
        for offset in 0..<count {
            newStorage[offset] = storage[index].take()
            index += 1
            if index == storage.count { index = 0 }
        }
        storage = newStorage
        head = 0
    }
}
