/// The operations in a queue, in the order they were added, with O(1) insertion and removal.
///
/// Each operation remembers its slot (`Op.QueueMembership.slot`); removal empties the slot. The
/// vacant slots (the removed members at the front, which a first-in, first-out queue leaves, and
/// the holes elsewhere) are cut out, and the members renumbered, once they outnumber the members
/// (and ``NarrowedCounters/memberListSlack``). So removal is amortised O(1), and at any age, in a
/// queue that is never empty too, the list holds fewer than twice as many slots as members (plus
/// the slack), and every slot number is below that.
struct MemberList {
    private var slots: [Op?] = []
    /// The first slot that may hold an operation; everything before it is empty.
    private var start = 0
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    /// The number of slots, vacant ones included: what a slot number stays below.
    var slotCount: Int { slots.count }

    /// The number of slots the list has room for without growing.
    var capacity: Int { slots.capacity }

    /// Appends `operation` and records its slot in it. Call with the queue's lock held.
    mutating func append(_ operation: Op) {
        if slots.count >= Int(Int32.max) {
            // Slots are below twice the member count: this takes a billion operations at once.
            preconditionFailure("A queue cannot hold more than \(Int32.max / 2) operations at once (adding \(operation))")
        }
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
            slots.removeAll(keepingCapacity: slots.capacity <= 1024)
            start = 0
        } else {
            while slots[start] == nil { start += 1 }
            while slots[slots.count - 1] == nil { slots.removeLast() }
            if slots.count - count > Swift.max(count, NarrowedCounters.memberListSlack) {
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

    /// Moves the members to a new array of about twice their number, renumbering them.
    ///
    /// Through buffer pointers: the members are moved (no reference is retained or released)
    /// without a bounds or uniqueness check per member, as a queue that drains from the front
    /// compacts about once per member that leaves.
    private mutating func compact() {
        let (start, count) = (self.start, self.count)
        let compacted = [Op?](unsafeUninitializedCapacity: Swift.max(count * 2, NarrowedCounters.memberListSlack)) { new, initialized in
            slots.withUnsafeMutableBufferPointer { old in
                var next = 0
                for index in start..<old.count {
                    // Moved out, not copied; the old slot is left holding nil.
                    guard let operation = old[index].take() else { continue }
                    operation.membership.slot = next
                    (new.baseAddress.unsafelyUnwrapped + next).initialize(to: operation)
                    next += 1
                }
                initialized = next
            }
        }
        slots = compacted
        self.start = 0
    }
}
