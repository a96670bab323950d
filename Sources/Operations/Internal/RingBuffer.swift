/// A growable first-in, first-out buffer with amortised O(1) `append` and `popFirst`.
///
/// A small stand-in for `Deque` that keeps the library free of dependencies. Its storage doubles
/// when full and halves when a quarter full (down to ``NarrowedCounters/ringBufferMinimumCapacity``),
/// so a buffer that was once long (a burst of ready operations, of jobs) does not keep that
/// memory for good: its capacity follows what it holds now.
///
/// The elements live in a ``RingBufferStorage``: only the slots that hold an element are
/// initialized, so growing and shrinking move the elements with two block moves and touch no
/// other slot, and an append or a pop is a store or a load at a computed index (it is on the path
/// of every operation a queue runs). The buffer is a value: a copy shares the storage until one
/// of the two changes (copy on write).
struct RingBuffer<Element> {
    /// `nil` until the first append (an empty buffer allocates nothing).
    private var storage: RingBufferStorage<Element>?

    init() {}

    /// The number of elements.
    var count: Int { storage?.count ?? 0 }

    var isEmpty: Bool { count == 0 }

    /// The number of elements the buffer has room for without growing.
    var capacity: Int { storage?.capacity ?? 0 }

    /// Adds an element at the back.
    /// - Complexity: Amortised O(1).
    mutating func append(_ element: Element) {
        // Read through `self`, not bound to a local: no retain and release of the storage.
        if _slowPath(!hasUniqueStorageWithRoom) {
            resize(to: Swift.max(NarrowedCounters.ringBufferMinimumCapacity, capacity * 2))
        }
        storage.unsafelyUnwrapped.append(element)
    }

    /// Removes and returns the element at the front, or `nil` when empty.
    /// - Complexity: Amortised O(1).
    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        if _slowPath(!isKnownUniquelyReferenced(&storage)) {
            storage = storage.unsafelyUnwrapped.copy(capacity: capacity)
        }
        let element = storage.unsafelyUnwrapped.popFirst()
        if _slowPath(count <= capacity / 4 && capacity > NarrowedCounters.ringBufferMinimumCapacity) {
            shrink()
        }
        return element
    }

    /// Whether the storage is this buffer's alone and has a free slot.
    private var hasUniqueStorageWithRoom: Bool {
        mutating get {
            guard storage != nil, isKnownUniquelyReferenced(&storage) else { return false }
            return storage.unsafelyUnwrapped.count < storage.unsafelyUnwrapped.capacity
        }
    }

    /// The element at the front, or `nil` when empty.
    var first: Element? {
        guard let storage, storage.count > 0 else { return nil }
        return storage.slots[storage.head]
    }

    /// The elements from front to back.
    var elements: [Element] {
        guard let storage else { return [] }
        var result: [Element] = []
        result.reserveCapacity(storage.count)
        storage.forEach { result.append($0) }
        return result
    }

    /// Removes every element, returning them front to back.
    mutating func removeAll() -> [Element] {
        let result = elements
        self = RingBuffer()
        return result
    }

    /// Halves the capacity (the buffer is at most a quarter full).
    @inline(never)
    private mutating func shrink() {
        resize(to: Swift.max(NarrowedCounters.ringBufferMinimumCapacity, capacity / 2))
    }

    /// Moves the elements (front first) to the start of new storage of `newCapacity` slots (at
    /// least `count`): no element is copied, retained or released, unless the old storage is
    /// shared with another buffer (then they are copied, and it keeps its own).
    @inline(never)
    private mutating func resize(to newCapacity: Int) {
        guard storage != nil else {
            storage = RingBufferStorage(capacity: newCapacity)
            return
        }
        // Asked before the storage is bound to a local, which would be a second reference.
        let isUnique = isKnownUniquelyReferenced(&storage)
        let old = storage.unsafelyUnwrapped
        storage = isUnique ? old.moved(capacity: newCapacity) : old.copy(capacity: newCapacity)
    }
}
