// Taking a dump: one look at the queue under its lock, then what the exclusivity table says about
// the members that wait for categories, then, with no lock held, the states of the operations the
// members wait for and every description.

extension QueueDump {
    /// Takes the dump of `queue`, showing the members that `filter` lets through (all if `nil`),
    /// at most `limit` of them.
    ///
    /// The queue and each shown member are looked at together, under the queue's lock (and each
    /// member's, nested in it), so the counts and the members' lines agree; the operations they
    /// wait for are looked at afterwards, one at a time. No user code runs under a lock: the
    /// descriptions are read last.
    static func take(of queue: OpQueue, only filter: Set<ObjectIdentifier>? = nil, limit: Int = .max) -> QueueDump {
        let gathered = Gathered.gather(from: queue, only: filter, limit: limit)
        // Asked after the queue's lock is released (the exclusivity table's lock is the innermost
        // of the library's locks, and the queue's is kept short).
        var blockers: [ObjectIdentifier: [Exclusivity.Blocker]] = [:]
        for member in gathered.members
        where member.lifecycle == .pending && !member.isCancelled && member.gate == .waitingForExclusivity {
            if let found = Exclusivity.blockers(of: member.operation) {
                blockers[ObjectIdentifier(member.operation)] = found
            }
        }
        let namer = Namer(dumping: queue)
        for member in gathered.members {
            namer.note(member: member.operation, state: member.state)
        }
        let lines = gathered.members.map { member in
            line(for: member, in: gathered, blockers: blockers[ObjectIdentifier(member.operation)], namer: namer)
        }
        let name = gathered.owningGroup.map { "children of \(namer.label($0))" } ?? oneLine(queue.description)
        return QueueDump(queue: name, maxConcurrentOperationCount: gathered.maxConcurrentOperationCount,
                         isSuspended: gathered.isSuspended, operationCount: gathered.operationCount,
                         runningCount: gathered.runningCount, lines: lines, omitted: gathered.omitted)
    }

    /// The line of one member: its state, and what holds it.
    private static func line(for member: Gathered.Member, in queue: Gathered, blockers: [Exclusivity.Blocker]?,
                             namer: Namer) -> Line {
        var holds: [Hold] = []
        switch member.lifecycle {
        case .executing:
            if let group = member.operation as? GroupOp {
                let children = group.unfinishedChildren
                if !children.isEmpty {
                    holds.append(.children(count: children.count, shown: children.prefix(shownLimit).map(namer.related)))
                }
            }
        case .finishing, .finished:
            break
        case .pending:
            holds = pendingHolds(of: member, in: queue, blockers: blockers, namer: namer)
        }
        return Line(state: member.state, operation: namer.label(member.operation), priority: member.priority,
                    isBarrier: member.isBarrier, isCancelled: member.isCancelled, holds: holds)
    }

    /// What holds a pending member: its own holds (dependencies, conditions, exclusivity,
    /// barriers) if it has any, else the queue's (suspension, width), else nothing: it is about
    /// to start.
    private static func pendingHolds(of member: Gathered.Member, in queue: Gathered, blockers: [Exclusivity.Blocker]?,
                                     namer: Namer) -> [Hold] {
        var holds: [Hold] = []
        if !member.isCancelled {
            if !member.isReady {
                // Looked at without a lock: a dependency that finished since reads finished.
                let unfinished = member.dependencies.filter { !$0.isFinished }
                holds.append(.dependencies(count: unfinished.count, shown: unfinished.prefix(shownLimit).map(namer.related)))
                if !member.conditions.isEmpty {
                    holds.append(.conditionsAfterDependencies(member.conditions))
                }
            } else {
                switch member.gate {
                case .closed, .evaluating:
                    if !member.conditions.isEmpty {
                        holds.append(.evaluatingConditions(member.conditions))
                    }
                case .waitingForExclusivity:
                    for blocker in blockers ?? [] {
                        holds.append(.exclusivity(category: blocker.category,
                                                  holders: blocker.holders.map(namer.related),
                                                  earlierRequests: blocker.earlierRequests.map(namer.related)))
                    }
                case .open:
                    break
                }
            }
        }
        if member.epoch > queue.completedBarriers, let barrier = queue.barriers[member.epoch - 1] {
            holds.append(.barrier(namer.related(barrier)))
        } else if member.isBarrier, !queue.beforeFirstBarrier.isEmpty {
            let earlier = queue.beforeFirstBarrier
            holds.append(.earlierOperations(count: earlier.count, shown: earlier.prefix(shownLimit).map(namer.related)))
        }
        if holds.isEmpty {
            if queue.isSuspended { holds.append(.suspended) }
            if queue.runningCount >= queue.width {
                holds.append(.slot(running: queue.runningCount, width: queue.width))
            }
            if holds.isEmpty { holds.append(.aboutToStart) }
        }
        return holds
    }
}
