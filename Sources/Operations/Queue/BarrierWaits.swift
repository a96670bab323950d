/// What the pending barriers of one queue make its members wait for, taken in one look under the
/// queue's lock so that a cycle search pays O(members) once per queue, not once per operation.
///
/// A barrier waits for the members added before it (since the barrier before it) and for that
/// earlier barrier; a member added after a pending barrier waits for it.
struct BarrierWaits {
    /// The pending barriers, by epoch.
    private var barriers: [Int: Op] = [:]
    /// The members that are not barriers, by epoch.
    private var membersByEpoch: [Int: [Op]] = [:]
    /// Each member's epoch, and whether it is a barrier.
    private var positions: [ObjectIdentifier: (epoch: Int, isBarrier: Bool)] = [:]
    /// The number of barriers that have left the queue.
    private var completedBarriers = 0

    /// No barrier waits (a queue without pending barriers).
    init() {}

    /// The waits among `members`, a queue's members with their ``Op/QueueMembership``, of which
    /// `completedBarriers` barriers have left. Call with the queue's lock held.
    init(members: [Op], completedBarriers: Int) {
        self.completedBarriers = completedBarriers
        for member in members {
            let membership = member.membership
            positions[ObjectIdentifier(member)] = (membership.epoch, membership.isBarrier)
            if membership.isBarrier {
                barriers[membership.epoch] = member
            } else {
                membersByEpoch[membership.epoch, default: []].append(member)
            }
        }
    }

    /// What `operation` waits for because of barriers (nothing if it is not a member).
    func waits(of operation: Op) -> [Op] {
        guard let position = positions[ObjectIdentifier(operation)] else { return [] }
        var waits: [Op] = []
        if position.isBarrier {
            waits = membersByEpoch[position.epoch] ?? []
            if let previous = barriers[position.epoch - 1] { waits.append(previous) }
        } else if position.epoch > completedBarriers, let previous = barriers[position.epoch - 1] {
            waits.append(previous)
        }
        return waits
    }
}
