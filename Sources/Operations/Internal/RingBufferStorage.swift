/// The slots of a ``RingBuffer``: `count` elements from `head`, wrapping at `capacity`; the other
/// slots are uninitialized.
///
/// Only its ``RingBuffer`` uses it, and changes it only through a unique reference (copy on
/// write), so it needs no lock of its own: the buffer's owner guards it (a queue's lock, the
/// worker pool's lock).
final class RingBufferStorage<Element> {
    let capacity: Int
    var head = 0
    var count = 0
    let slots: UnsafeMutablePointer<Element>

    init(capacity: Int) {
        self.capacity = capacity
        slots = .allocate(capacity: capacity)
    }

    deinit {
        let firstPart = Swift.min(count, capacity - head)
        (slots + head).deinitialize(count: firstPart)
        slots.deinitialize(count: count - firstPart)
        slots.deallocate()
    }

    /// Stores `element` behind the last one; there must be room.
    @inline(__always)
    func append(_ element: Element) {
        var index = head + count
        if index >= capacity { index -= capacity }
        (slots + index).initialize(to: element)
        count += 1
    }

    /// Takes the first element out; there must be one.
    @inline(__always)
    func popFirst() -> Element {
        let element = (slots + head).move()
        head += 1
        if head == capacity { head = 0 }
        count -= 1
        if count == 0 { head = 0 }
        return element
    }

    /// Calls `body` with each element, front to back.
    func forEach(_ body: (Element) -> Void) {
        var index = head
        for _ in 0..<count {
            body(slots[index])
            index += 1
            if index == capacity { index = 0 }
        }
    }

    /// New storage of `newCapacity` slots with the elements moved to its start; this one is left
    /// empty (its deinitialization then frees only the slots).
    func moved(capacity newCapacity: Int) -> RingBufferStorage {
        let new = RingBufferStorage(capacity: newCapacity)
        let firstPart = Swift.min(count, capacity - head)
        new.slots.moveInitialize(from: slots + head, count: firstPart)
        (new.slots + firstPart).moveInitialize(from: slots, count: count - firstPart)
        new.count = count
        count = 0
        head = 0
        return new
    }

    /// New storage of `newCapacity` slots with copies of the elements at its start; this one
    /// keeps its own.
    func copy(capacity newCapacity: Int) -> RingBufferStorage {
        let new = RingBufferStorage(capacity: newCapacity)
        var index = 0
        forEach { element in
            (new.slots + index).initialize(to: element)
            index += 1
        }
        new.count = count
        return new
    }
}
