import Synchronization

/// Finds dependency cycles, reports them, and ends the ones that would otherwise freeze.
///
/// **Found.** A cycle is looked for on a new edge (cheaply, most of the time for free), in a
/// queue that stays stalled, and before a thread or task waits. Every cycle found is reported
/// once to ``OpDiagnostics`` and then watched (``CycleWatch``). Finding a cycle changes nothing:
/// cancelling one of its operations (a cancelled operation ignores its dependencies) or removing
/// one of its dependencies breaks it, and its operations then run in dependency order.
///
/// **Ended.** A cycle is ended, each of its operations cancelled with a ``DependencyCycleError``
/// (none of their bodies runs, and their queues go on), only where it would freeze otherwise:
/// when a thread or task waits (for a moment: ``CycleSearchingWait``) for one of its operations,
/// for an operation that waits for one (``endCycles(reachableFrom:)``), or for a queue that holds
/// one (``endCycles(blockingMembersOf:)``); or when all its operations are in queues and it has
/// stayed unbroken for ``OpQueue/dependencyCycleGracePeriod`` (``CycleWatch``). Before ending a
/// cycle, ``end(_:)`` checks every edge again (``DependencyCycle/isIntact()``), so that concurrent
/// changes never end operations that were not on a cycle at one moment.
///
/// **New edges.** Every operation has a serial number from its creation. An edge whose dependency
/// is older than its dependent ("forward") can only close a cycle if the graph already has an edge
/// the other way ("backward"): following dependencies only ever goes to older operations
/// otherwise. So the library counts the backward edges that still hold an operation back. A new
/// backward edge is searched (``DependencyCycleSearch``, up to ``searchLimit`` operations on each
/// side). A new forward edge can only close a cycle through a backward edge whose dependency is at
/// least as new as the new edge's dependent, so it is searched (up to ``forwardSearchLimit``
/// operations on each side) only when such an edge may exist: building a chain in creation order
/// never searches. The search goes from both ends of the new edge at once and stops as soon as
/// one end has nothing left to reach, so it costs about twice the smaller side: a graph built from
/// either end, in any creation order, costs a look or two per edge. It follows only edges that
/// hold back a pending, uncancelled operation (and executing groups' unfinished children).
///
/// **Waits.** A cycle needs a backward edge or a barrier (a barrier's waits can go to a newer
/// operation), so a wait searches only when ``backwardEdges`` or ``pendingBarriers`` is not zero.
/// A group's child created after the group counts as a backward edge (the group waits for it).
enum DependencyCycles {
    /// Backward edges (dependency created after its dependent) that still hold an operation back,
    /// and children created after their group that have not finished.
    /// Relaxed: searches read it to decide whether one is worth making, and a cycle's edges are
    /// all in place (each under its operation's lock) before the search that finds it starts.
    static let backwardEdges = Atomic<Int>(0)

    /// The newest operation (by serial) that a backward edge ever pointed to. Never decreases;
    /// relaxed like ``backwardEdges``.
    static let newestBackwardDependency = Atomic<UInt64>(0)

    /// Barriers that are in queues and have not left them; relaxed like ``backwardEdges``.
    static let pendingBarriers = Atomic<Int>(0)

    /// The most operations each side of the search on a new backward edge reaches (see
    /// ``DependencyCycleSearch``): a cycle of up to this many operations is always found when it is
    /// closed, a longer one often.
    static let searchLimit = 2_000

    /// The most operations each side of the search on a new forward edge reaches (while backward
    /// edges exist).
    static let forwardSearchLimit = 32

    /// Whether the graph may hold a cycle at all: every cycle has a backward edge or goes
    /// through a barrier.
    static var mayExist: Bool {
        backwardEdges.load(ordering: .relaxed) > 0 || pendingBarriers.load(ordering: .relaxed) > 0
    }

    /// What holds back `operation`: its unfinished dependencies if it is pending and not cancelled
    /// (cancellation makes an operation ignore its dependencies); for an executing ``GroupOp``,
    /// its unfinished children.
    static func blockingDependencies(of operation: Op) -> [Op] {
        let (dependencies, isExecuting) = operation.withState { machine -> ([Op], Bool) in
            guard machine.lifecycle == .pending, !machine.isCancelled else { return ([], machine.lifecycle == .executing) }
            return (machine.dependencies, false)
        }
        if isExecuting {
            return (operation as? GroupOp)?.unfinishedChildren ?? []
        }
        return dependencies.filter { !$0.isFinished }
    }

    /// What waits for `operation`, the reverse of ``blockingDependencies(of:)``: its dependents
    /// that are pending and not cancelled (those that counted it as an unfinished dependency), and
    /// its group if that is executing. Nothing waits for a finished operation.
    static func waiters(of operation: Op) -> [Op] {
        // Retained under the lock (the list does not retain them), released after unlocking.
        let (dependents, group) = operation.withState { machine -> ([Op], GroupOp?) in
            guard !machine.isFinished else { return ([], nil) }
            return (machine.dependents.retainedDependents(), machine.isGroupChild ? machine.group : nil)
        }
        var waiters = dependents.filter { dependent in
            dependent.withState { $0.lifecycle == .pending && !$0.isCancelled }
        }
        if let group, group.withState({ $0.lifecycle == .executing }) {
            waiters.append(group)
        }
        return waiters
    }

    // MARK: Finding

    /// Called after `dependent` started to wait for `dependency`: reports the cycle this closes,
    /// if any.
    static func checkNewEdge(dependent: Op, dependency: Op) {
        let isBackward = dependency.serial > dependent.serial
        if isBackward {
            backwardEdges.add(1, ordering: .relaxed)
            newestBackwardDependency.max(dependency.serial, ordering: .relaxed)
        } else if backwardEdges.load(ordering: .relaxed) == 0
                    || dependent.serial > newestBackwardDependency.load(ordering: .relaxed) {
            // A cycle through a forward edge needs a backward edge whose dependency is at least as
            // new as the dependent (the path must climb back up to it): there is none.
            return
        }
        // A cycle exists if the dependency (transitively) waits for the dependent, which must
        // itself still be held back by the new edge.
        guard dependent.withState({ $0.lifecycle == .pending && !$0.isCancelled }),
              let cycle = DependencyCycleSearch.run(dependent: dependent, dependency: dependency,
                                                    limit: isBackward ? searchLimit : forwardSearchLimit).cycle
        else { return }
        found(DependencyCycle(path: cycle, barrierEdges: Array(repeating: false, count: cycle.count)))
    }

    /// Looks for cycles among the waiting operations of a queue that stayed stalled, and watches
    /// the ones it finds.
    static func watchCycles(among members: [Op]) {
        let graph = WaitGraph()
        for path in cycles(from: members, successors: graph.successors(of:)) {
            found(graph.cycle(along: path))
        }
    }

    /// Reports `cycle` if it is new and intact, and watches it. The report ends with the lines of
    /// the dumps of the queues that hold its operations (``OpQueue/dump()``): a queue that stalled
    /// shows what holds each of them.
    ///
    /// A search reads one operation at a time, so concurrent changes can make it see a cycle that
    /// never existed at any one moment: the cycle is checked again (``DependencyCycle/isIntact()``)
    /// before anything is said about it.
    static func found(_ cycle: DependencyCycle) {
        guard cycle.isIntact() else { return }
        if CycleWatch.watch(cycle) {
            OpDiagnostics.report(.dependencyCycle(cycle.error.withQueueDump(QueueDump.section(for: cycle.operations))))
            CycleWatch.armIfEnqueued(cycle.key)
        }
    }

    // MARK: Ending

    /// Called while a thread or task waits for `operation`: ends every cycle that it waits for,
    /// directly or through other operations, so that the wait returns.
    static func endCycles(reachableFrom operation: Op) {
        guard mayExist else { return }
        endCycles(from: [operation])
    }

    /// Called while a thread or task waits for all of `operations`: ends every cycle that one of
    /// them is on or waits for.
    static func endCycles(reachableFromAnyOf operations: [Op]) {
        guard mayExist else { return }
        endCycles(from: operations.filter { !$0.isFinished })
    }

    /// Called while a thread or task waits for `queue` to become empty: ends every cycle that a
    /// member of the queue waits for.
    static func endCycles(blockingMembersOf queue: OpQueue) {
        guard mayExist else { return }
        endCycles(from: queue.operations)
    }

    /// Ends the cycles reachable from `roots`, searching again after each round: ending one cycle
    /// of a strongly connected component may leave another.
    private static func endCycles(from roots: [Op]) {
        for _ in 0..<64 {
            let graph = WaitGraph()
            let paths = cycles(from: roots, successors: graph.successors(of:))
            if paths.isEmpty { return }
            var ended = false
            for path in paths {
                let cycle = graph.cycle(along: path)
                found(cycle)
                ended = end(cycle) || ended
            }
            if !ended { return }
        }
    }

    /// Ends `cycle` if it is still intact (``DependencyCycle/isIntact()``): marks every operation
    /// cancelled with the cycle's error, all of them before any acts on it (an operation on an
    /// intact cycle cannot start, and none becomes ready before its marked dependency finishes).
    /// Then it reports the end to ``OpDiagnostics`` and lets the operations finish: those in a
    /// queue when the queue starts them, the others at once. Returns whether it ended the cycle.
    ///
    /// If the program breaks the cycle between the check and the marks, the operations it freed
    /// may start first; those are not marked (only pending operations are), as when the cycle is
    /// broken before the check.
    ///
    /// The report ends with the lines of the dumps of the queues that hold the operations
    /// (``OpQueue/dump()``), taken before the check so as not to widen the moment between the
    /// check and the marks.
    ///
    /// One caller at a time ends a given cycle (``CycleWatch/claimEnding(_:)``); a caller that
    /// finds it being ended returns `false` at once, and the other caller's end releases its wait.
    @discardableResult
    static func end(_ cycle: DependencyCycle) -> Bool {
        let key = cycle.key
        guard CycleWatch.claimEnding(key) else { return false }
        defer {
            CycleWatch.forget(key)
            CycleWatch.releaseEnding(key)
        }
        let queueDump = QueueDump.section(for: cycle.operations)
        guard cycle.isIntact() else { return false }
        let error = cycle.error
        let marks = cycle.operations.map { $0.markFailed(with: error) }
        // Reported before the operations finish, so that whoever waits for them sees the report;
        // observers hear of the end once it has taken effect.
        OpDiagnostics.report(.dependencyCycleEnded(error.withQueueDump(queueDump)))
        for (operation, mark) in zip(cycle.operations, marks) {
            operation.performFail(mark.action)
        }
        for (operation, mark) in zip(cycle.operations, marks) {
            operation.deliver(mark.registry)
            mark.observers?.deliverQueued(from: operation)
        }
        return true
    }

    // MARK: Accounting

    /// `count` backward edges stopped holding their dependents back.
    @inline(__always)
    static func backwardEdgesResolved(_ count: Int) {
        if count > 0 {
            backwardEdges.subtract(count, ordering: .relaxed)
        }
    }

    /// `children` joined `group`. An executing group waits for its unfinished children, so a child
    /// created after its group is a backward edge too (a cycle through it needs no backward
    /// dependency: the child may depend on its group): counted from the moment it joins (before
    /// the group waits for it, which only makes searches possible earlier) until it is finished
    /// for good (``groupChildLeft(_:group:)``).
    static func groupChildrenJoined(_ children: [Op], group: Op) {
        var count = 0
        var newest: UInt64 = 0
        for child in children where child.serial > group.serial {
            count += 1
            newest = max(newest, child.serial)
        }
        if count > 0 {
            backwardEdges.add(count, ordering: .relaxed)
            newestBackwardDependency.max(newest, ordering: .relaxed)
        }
    }

    /// `child`, counted by ``groupChildrenJoined(_:group:)``, is finished for good.
    static func groupChildLeft(_ child: Op, group: Op) {
        backwardEdgeResolved(dependentSerial: group.serial, dependencySerial: child.serial)
    }

    /// One backward edge stopped holding its dependent back.
    static func backwardEdgeResolved(dependentSerial: UInt64, dependencySerial: UInt64) {
        if dependencySerial > dependentSerial {
            backwardEdges.subtract(1, ordering: .relaxed)
        }
    }

    // MARK: Strongly connected components

    /// The cycles of the graph reachable from `roots` along `successors`: one cycle per strongly
    /// connected component of two or more operations, as a path in which each operation waits for
    /// the next and the last for the first. Iterative (Tarjan's algorithm), so long chains do
    /// not exhaust the stack.
    static func cycles(from roots: [Op], successors: (Op) -> [Op]) -> [[Op]] {
        var index: [ObjectIdentifier: Int] = [:]
        var lowlink: [ObjectIdentifier: Int] = [:]
        var edges: [ObjectIdentifier: [Op]] = [:]
        var onStack: Set<ObjectIdentifier> = []
        var stack: [Op] = []
        var nextIndex = 0
        var components: [[Op]] = []

        struct Frame {
            let node: Op
            var position = 0
        }

        for root in roots where index[ObjectIdentifier(root)] == nil {
            var frames: [Frame] = []
            func visit(_ node: Op) {
                let id = ObjectIdentifier(node)
                index[id] = nextIndex
                lowlink[id] = nextIndex
                nextIndex += 1
                stack.append(node)
                onStack.insert(id)
                edges[id] = successors(node)
                frames.append(Frame(node: node))
            }
            visit(root)
            while !frames.isEmpty {
                let frame = frames[frames.count - 1]
                let id = ObjectIdentifier(frame.node)
                let next = edges[id]!
                if frame.position < next.count {
                    frames[frames.count - 1].position += 1
                    let successor = next[frame.position]
                    let successorID = ObjectIdentifier(successor)
                    if index[successorID] == nil {
                        visit(successor)
                    } else if onStack.contains(successorID) {
                        lowlink[id] = min(lowlink[id]!, index[successorID]!)
                    }
                    continue
                }
                frames.removeLast()
                if lowlink[id] == index[id] {
                    var component: [Op] = []
                    while let member = stack.popLast() {
                        onStack.remove(ObjectIdentifier(member))
                        component.append(member)
                        if member === frame.node { break }
                    }
                    if component.count > 1 {
                        components.append(component)
                    }
                }
                if let parent = frames.last {
                    let parentID = ObjectIdentifier(parent.node)
                    lowlink[parentID] = min(lowlink[parentID]!, lowlink[id]!)
                }
            }
        }
        return components.map { cyclePath(through: $0, edges: edges) }
    }

    /// A simple cycle through the oldest member of a strongly connected component.
    private static func cyclePath(through component: [Op], edges: [ObjectIdentifier: [Op]]) -> [Op] {
        let members = Set(component.map(ObjectIdentifier.init))
        let start = component.min { $0.serial < $1.serial }!
        var parent: [ObjectIdentifier: Op] = [:]
        var queue = [start]
        var head = 0
        while head < queue.count {
            let node = queue[head]
            head += 1
            for next in edges[ObjectIdentifier(node)] ?? [] where members.contains(ObjectIdentifier(next)) {
                if next === start {
                    return path(to: node, parents: parent)
                }
                if parent[ObjectIdentifier(next)] == nil && next !== start {
                    parent[ObjectIdentifier(next)] = node
                    queue.append(next)
                }
            }
        }
        return component
    }

    /// The path from the search's start to `end`, following `parents` back from `end`.
    static func path(to end: Op, parents: [ObjectIdentifier: Op]) -> [Op] {
        var path = [end]
        var current = end
        while let previous = parents[ObjectIdentifier(current)] {
            path.append(previous)
            current = previous
        }
        return path.reversed()
    }
}
