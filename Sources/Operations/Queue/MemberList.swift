/// The operations in a queue, in the order they were added, with O(1) insertion and removal.
///
/// Each operation remembers its slot (`Op.QueueMembership.slot`); removal empties the slot, and the list
/// is compacted (renumbering the slots) once more than half of it is empty, so removal is
/// amortised O(1) and the list never holds much more than the live operations.
struct MemberList {
    private var slots: [Op?] = []
    /// The first slot that may hold an operation; everything before it is empty.
    private var start = 0
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    /// Appends `operation` and records its slot in it. Call with the queue's lock held.
    mutating func append(_ operation: Op) {
        operation.membership.slot = slots.count
        slots.append(operation)
        count += 1
    }

    /// Removes `operation`, which must be a member. Returns it so that the caller releases it
    /// after unlocking.
    mutating func remove(_ operation: Op) -> Op {
        let slot = operation.membership.slot
        precondition(slot >= start && slot < slots.count && slots[slot] === operation,
                     "Internal inconsistency: \(operation) is not in its queue's member list")
        let removed = slots[slot].take()!
        operation.membership.slot = -1
        count -= 1
        if count == 0 {
            slots.removeAll(keepingCapacity: slots.count <= 1024)
            start = 0
        } else {
            while slots[start] == nil { start += 1 }
            if slots.count > 64 && count * 2 < slots.count - start {
                compact()
            }
        }
        return removed
    }

    /// The members, first added first.
    var elements: [Op] {
        var result: [Op] = []
        result.reserveCapacity(count)
        for slot in slots[start...] {
            if let operation = slot { result.append(operation) }
        }
        return result
    }

    private mutating func compact() {
        var compacted: [Op?] = []
        compacted.reserveCapacity(count * 2)
        for slot in slots[start...] {
            if let operation = slot {
                operation.membership.slot = compacted.count
                compacted.append(operation)
            }
        }
        slots = compacted
        start = 0
    }
}
