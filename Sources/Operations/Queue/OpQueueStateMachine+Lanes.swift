// The lanes of mutual exclusivity (see `OpQueueStateMachine.Lane`): parking an operation that
// would wait behind one of its own queue, and letting the next one go when the head is done.

extension OpQueueStateMachine {
    /// Called for a live entry about to start whose operation has gates and is not a lane's
    /// head: parks it if an earlier operation of its queue asks for or holds its category, or
    /// else makes it the head of its category's lane. `category` is the operation's single
    /// exclusivity category (`nil`: it has no lane). Returns whether it was parked.
    mutating func parksInLane(_ entry: Entry, category: String?) -> Bool {
        guard let category else { return false }
        let operation = entry.operation
        let lane = lane(of: category)
        if lane.head != nil {
            operation.membership.isParked = true   // the parked entry stays its live one
            lane.parked.append(entry)
            return true
        }
        makeHead(operation, of: lane)
        return false
    }

    /// The lane of `category`, made if there is none.
    private mutating func lane(of category: String) -> Lane {
        if let sole = soleLane {
            if sole.category == category { return sole }
            // A second lane: both go in the tables from now on.
            lanes[sole.category] = sole
            if let head = sole.head { laneOfHead[head] = sole }
            soleLane = nil
        } else if let existing = lanes[category] {
            return existing
        }
        let lane = Lane(category: category)
        if lanes.isEmpty {
            soleLane = lane
        } else {
            lanes[category] = lane
        }
        return lane
    }

    private mutating func makeHead(_ operation: Op, of lane: Lane) {
        let id = ObjectIdentifier(operation)
        lane.head = id
        if lane !== soleLane { laneOfHead[id] = lane }
        operation.membership.isLaneHead = true
    }

    /// `operation` no longer asks for its lane's category or holds it (it left the queue, or
    /// its start came to nothing): if it is a lane's head, the next parked operation becomes the
    /// head and goes to the front of the ready lists. Returns whether a drainer is needed (see
    /// ``pushUnparked(_:callerWillPoll:)``).
    @inline(__always)
    mutating func releaseLane(of operation: Op, callerWillPoll: Bool) -> Bool {
        guard operation.membership.isLaneHead else { return false }
        return releaseLaneOfHead(operation, callerWillPoll: callerWillPoll)
    }

    /// ``releaseLane(of:callerWillPoll:)`` for an operation that heads a lane.
    private mutating func releaseLaneOfHead(_ operation: Op, callerWillPoll: Bool) -> Bool {
        operation.membership.isLaneHead = false
        let id = ObjectIdentifier(operation)
        let found: Lane?
        if let sole = soleLane, sole.head == id {
            found = sole
        } else {
            found = laneOfHead.removeValue(forKey: id)
        }
        guard let lane = found else { return false }
        lane.head = nil
        var stale: [Entry] = []
        let next = lane.takeNextParked(droppingStaleInto: &stale)
        for entry in stale { discardFromLane(entry) }
        guard let next else {
            if lane.isIdle {
                if lane === soleLane { soleLane = nil } else { lanes[lane.category] = nil }
            }
            return false
        }
        makeHead(next.operation, of: lane)
        return pushUnparked(next, callerWillPoll: callerWillPoll)
    }

    /// `operation` was cancelled: if it is parked, its entry goes to the front of the ready lists
    /// (its parked copy is dropped when its turn comes), so that it finishes at once. Returns
    /// whether a drainer is needed.
    mutating func unparkCancelled(_ operation: Op) -> Bool {
        guard operation.membership.isParked, operation.membership.hasLiveReadyEntry else { return false }
        operation.membership.isParked = false
        return pushUnparked(Entry(operation: operation, ticket: operation.membership.readyTicket), callerWillPoll: false)
    }

    /// How many operations are parked in the queue's lanes (for tests). O(lanes).
    var parkedCount: Int {
        lanes.values.reduce(soleLane?.parked.count ?? 0) { $0 + $1.parked.count }
    }
}
