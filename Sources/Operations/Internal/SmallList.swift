/// A list that stores its first element inline: most operations have one dependency and one
/// dependent, and a one-element array would be an allocation each.
struct SmallList<Element>: Sequence {
    private var head: Element?
    private var tail: [Element] = []

    init() {}

    var isEmpty: Bool { head == nil }

    var count: Int { head == nil ? 0 : 1 + tail.count }

    /// Adds an element at the end.
    mutating func append(_ element: consuming Element) {
        if head == nil {
            head = element
        } else {
            if tail.capacity == 0 {
                // Room for three at once: a list that spills usually grows to a few (a random
                // graph's operations have about four dependencies and dependents), and growing
                // one at a time would allocate twice on the way (one slot, then three).
                tail.reserveCapacity(3)
            }
            tail.append(element)
        }
    }

    /// Moves every element to the end of `array`, in order, leaving the list empty: the inline
    /// element is appended by itself, without the sequence copy of `append(contentsOf:)`.
    mutating func moveAll(into array: inout [Element]) {
        guard let first = head else { return }
        head = nil
        array.append(first)
        if !tail.isEmpty {
            array.append(contentsOf: tail)
            tail = []
        }
    }

    /// Removes and returns the first element that matches, keeping the order of the others.
    @discardableResult
    mutating func removeFirst(where matches: (Element) -> Bool) -> Element? {
        firstIndex(where: matches).map { remove(at: $0) }
    }

    /// Whether an element matches: without an iterator, which would copy the list (the
    /// dependency checks of a large graph call this for every edge).
    func contains(where matches: (Element) throws -> Bool) rethrows -> Bool {
        guard let head else { return false }
        if try matches(head) { return true }
        return try tail.contains(where: matches)
    }

    /// The position of the first element that matches (0 is the first element).
    func firstIndex(where matches: (Element) -> Bool) -> Int? {
        guard let head else { return nil }
        if matches(head) { return 0 }
        return tail.firstIndex(where: matches).map { $0 + 1 }
    }

    /// Removes and returns the element at `index`, keeping the order of the others.
    @discardableResult
    mutating func remove(at index: Int) -> Element {
        guard index > 0 else {
            let first = head!
            head = tail.isEmpty ? nil : tail.removeFirst()
            return first
        }
        return tail.remove(at: index - 1)
    }

    /// Calls `body` on each element, in order: without an iterator, which would copy the list
    /// (the exclusivity table hands out its turns in one on every release).
    func forEach(_ body: (Element) throws -> Void) rethrows {
        guard let head else { return }
        try body(head)
        for element in tail { try body(element) }
    }

    /// The elements, in order.
    var array: [Element] {
        guard let head else { return [] }
        return tail.isEmpty ? [head] : [head] + tail
    }

    var underestimatedCount: Int { count }

    func makeIterator() -> Iterator {
        Iterator(list: self)
    }

    struct Iterator: IteratorProtocol {
        private let list: SmallList
        private var position = -1

        fileprivate init(list: SmallList) {
            self.list = list
        }

        mutating func next() -> Element? {
            defer { position += 1 }
            if position == -1 { return list.head }
            return position < list.tail.count ? list.tail[position] : nil
        }
    }
}
