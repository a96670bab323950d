extension QueueDump {
    /// What one look at a queue under its lock found, before anything is named.
    ///
    /// Holds the operations it found (released by the caller, outside every lock). Taken with the
    /// queue's lock held, each member's own state read under the member's lock nested in it: the
    /// order ``OpQueue/enqueue(_:)`` uses. Nothing here calls user code.
    struct Gathered {
        /// The queue's settings and counts.
        var maxConcurrentOperationCount = OpQueue.defaultMaxConcurrentOperationCount
        var isSuspended = false
        var operationCount = 0
        var runningCount = 0
        /// The number of operations the queue may run at once (`Int.max` for the default).
        var width = Int.max
        /// The group whose children the queue runs, if it is a group's queue and the group runs.
        var owningGroup: GroupOp?
        /// The members to show, in the order they were added.
        var members: [Member] = []
        /// How many members are not shown.
        var omitted = 0
        /// How many barriers have left the queue: members of a later epoch wait for one.
        var completedBarriers = 0
        /// The pending barriers, by epoch (empty when none is pending).
        var barriers: [Int: Op] = [:]
        /// The members (barriers not included) that the oldest pending barrier waits for.
        var beforeFirstBarrier: [Op] = []

        /// Looks at `queue`: its settings, its barriers, and the state of the members that
        /// `filter` lets through (all if `nil`), at most `limit` of them.
        static func gather(from queue: OpQueue, only filter: Set<ObjectIdentifier>?, limit: Int) -> Gathered {
            var gathered = Gathered()
            // The member list is returned, not dropped under the lock (it holds references).
            let members: [Op] = queue.withLock {
                gathered.maxConcurrentOperationCount = queue.machine.maxConcurrentOperationCount
                gathered.isSuspended = queue.machine.isSuspended
                gathered.operationCount = queue.machine.operationCount
                gathered.runningCount = queue.machine.runningCount
                gathered.width = queue.machine.width
                gathered.owningGroup = queue.owningGroup
                let completedBarriers = queue.machine.completedBarriers
                gathered.completedBarriers = completedBarriers
                let barriersPending = queue.machine.barrierCount > completedBarriers
                let members = queue.machine.members.elements
                for operation in members {
                    let membership = operation.membership
                    if barriersPending {
                        if membership.isBarrier {
                            gathered.barriers[membership.epoch] = operation
                        } else if membership.epoch == completedBarriers {
                            gathered.beforeFirstBarrier.append(operation)
                        }
                    }
                    guard filter?.contains(ObjectIdentifier(operation)) ?? true, gathered.members.count < limit else {
                        gathered.omitted += 1
                        continue
                    }
                    gathered.members.append(Member(operation, membership: membership))
                }
                return members
            }
            withExtendedLifetime(members) {}
            return gathered
        }
    }
}
