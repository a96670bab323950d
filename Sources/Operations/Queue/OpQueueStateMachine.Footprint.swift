extension OpQueueStateMachine {
    /// The sizes of a queue's bookkeeping, in entries: what a queue that is never empty must keep
    /// in proportion to what it holds now (see the soak, `NeverEmptyQueueSoakTests`).
    struct Footprint: Equatable, Sendable, CustomStringConvertible {
        /// The members (waiting, ready or running operations).
        var members = 0
        /// The member list's slots, vacant ones included.
        var memberSlots = 0
        /// The member list's capacity.
        var memberCapacity = 0
        /// Entries on the ready lists, live and stale.
        var readyEntries = 0
        /// The ready lists' capacity.
        var readyCapacity = 0
        /// Entries held behind a pending barrier, live and stale.
        var heldEntries = 0
        /// Ready barriers waiting for their turn.
        var readyBarriers = 0
        /// The epoch counts' capacity (one epoch per pending barrier, plus one).
        var epochCapacity = 0
        /// Stale entries dropped and not yet released by the storage.
        var discarded = 0

        /// The larger of each size.
        func max(_ other: Footprint) -> Footprint {
            Footprint(members: Swift.max(members, other.members),
                      memberSlots: Swift.max(memberSlots, other.memberSlots),
                      memberCapacity: Swift.max(memberCapacity, other.memberCapacity),
                      readyEntries: Swift.max(readyEntries, other.readyEntries),
                      readyCapacity: Swift.max(readyCapacity, other.readyCapacity),
                      heldEntries: Swift.max(heldEntries, other.heldEntries),
                      readyBarriers: Swift.max(readyBarriers, other.readyBarriers),
                      epochCapacity: Swift.max(epochCapacity, other.epochCapacity),
                      discarded: Swift.max(discarded, other.discarded))
        }

        /// Every slot of the scheduler's storage, in entries.
        var totalCapacity: Int {
            memberCapacity + readyCapacity + heldEntries + readyBarriers + epochCapacity + discarded
        }

        var description: String {
            "\(members) members in \(memberSlots) slots (capacity \(memberCapacity)), "
                + "\(readyEntries) ready entries (capacity \(readyCapacity)), \(heldEntries) held, "
                + "\(readyBarriers) ready barriers, epoch capacity \(epochCapacity), \(discarded) discarded"
        }
    }

    /// The sizes of the scheduler's storage now.
    var footprint: Footprint {
        Footprint(members: members.count, memberSlots: members.slotCount, memberCapacity: members.capacity,
                  readyEntries: ready.count, readyCapacity: ready.capacity,
                  heldEntries: held.values.reduce(0) { $0 + $1.count }, readyBarriers: readyBarriers.count,
                  epochCapacity: epochCounts.capacity, discarded: discarded.count)
    }
}
