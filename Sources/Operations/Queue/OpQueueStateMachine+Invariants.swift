#if OPERATIONS_INTERNAL_CHECKS
extension OpQueueStateMachine {
    /// Traps if the state breaks one of the scheduler's invariants. Compiled only with
    /// `-D OPERATIONS_INTERNAL_CHECKS`; the queue calls it after every event.
    func checkInvariants() {
        precondition(runningCount >= 0, "Internal inconsistency: running count \(runningCount)")
        precondition(pendingDrainers == 0 || pendingDrainers == 1, "Internal inconsistency: \(pendingDrainers) pending drainers")
        let pendingBarriers = barrierCount - completedBarriers
        precondition(pendingBarriers >= 0 && epochCounts.count == pendingBarriers + 1,
                     "Internal inconsistency: \(epochCounts.count) epoch counts for \(pendingBarriers) pending barriers")
        precondition(epochCounts.elements.allSatisfy { $0 >= 0 }, "Internal inconsistency: negative epoch count in \(epochCounts.elements)")
        precondition(epochCounts.elements.reduce(0, +) + pendingBarriers == members.count,
                     "Internal inconsistency: epochs \(epochCounts.elements) and \(pendingBarriers) barriers for \(members.count) members")
        precondition(readyBarriers.keys.allSatisfy { $0 >= completedBarriers }, "Internal inconsistency: a ready barrier of a past epoch")
        precondition(held.keys.allSatisfy { $0 > completedBarriers }, "Internal inconsistency: held operations of a current epoch")
        precondition(staleEntries >= 0 && staleEntries <= readyCount,
                     "Internal inconsistency: \(staleEntries) stale of \(readyCount) ready entries")
        // At any age, memory follows what the queue holds now.
        precondition(staleEntries * 2 <= readyCount + 1,
                     "Internal inconsistency: \(staleEntries) stale of \(readyCount) ready entries were not compacted")
        for (epoch, list) in held {
            precondition(list.count <= 2 * epochCounts[epoch - completedBarriers] + NarrowedCounters.heldListSlack + 1,
                         "Internal inconsistency: \(list.count) held entries for \(epochCounts[epoch - completedBarriers]) members of epoch \(epoch)")
        }
        precondition(readyBarriers.count <= pendingBarriers, "Internal inconsistency: \(readyBarriers.count) ready barriers for \(pendingBarriers) pending")
        members.checkInvariants()
        let untaken = members.elements.reduce(0) { $0 + ($1.membership.isTaken ? 0 : 1) }
        precondition(pendingCount == untaken,
                     "Internal inconsistency: \(pendingCount) pending counted for \(untaken) members not taken to start")
    }
}

extension MemberList {
    /// Traps if a member does not know its slot, or if vacant slots were not compacted.
    func checkInvariants() {
        precondition(elements.count == count, "Internal inconsistency: \(elements.count) members, count \(count)")
        precondition(slotCount - count <= Swift.max(count, NarrowedCounters.memberListSlack),
                     "Internal inconsistency: \(slotCount) slots for \(count) members")
    }
}
#endif
