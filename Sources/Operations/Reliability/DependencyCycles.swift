import Synchronization

/// Finds dependency cycles: on a new edge (cheaply, most of the time for free), in a stalled
/// queue, and in a set of operations a user wants to check.
///
/// **New edges.** Every operation has a serial number from its creation. An edge whose dependency
/// is older than its dependent ("forward") can only close a cycle if the graph already has an edge
/// the other way ("backward"): following dependencies only ever goes to older operations
/// otherwise. So the library counts the backward edges that still hold an operation back. A new
/// backward edge is searched up to ``searchLimit`` operations. A new forward edge can only close a
/// cycle through a backward edge whose dependency is at least as new as the new edge's dependent,
/// so it is searched (up to ``forwardSearchLimit`` operations) only when such an edge may exist:
/// building a chain in creation order never searches. The search follows only dependencies that hold back a pending, uncancelled
/// operation.
///
/// **Later.** A cycle the quick search missed is found when a queue holding its operations stalls
/// (``OpQueue`` checks a queue that stayed stalled for a while), or when a thread is about to wait
/// for one of its operations (``Op/waitUntilFinished()``).
enum DependencyCycles {
    /// Backward edges (dependency created after its dependent) that still hold an operation back.
    /// Relaxed: it only decides whether a search is worth making.
    static let backwardEdges = Atomic<Int>(0)

    /// The newest operation (by serial) that a backward edge ever pointed to. Never decreases;
    /// relaxed like ``backwardEdges``.
    static let newestBackwardDependency = Atomic<UInt64>(0)

    /// The most operations a search on a new backward edge visits.
    static let searchLimit = 2_000

    /// The most operations a search on a new forward edge visits (while backward edges exist).
    static let forwardSearchLimit = 32

    /// The dependencies that hold back `operation`: its unfinished dependencies if it is pending
    /// and not cancelled (cancellation makes an operation ignore its dependencies).
    static func blockingDependencies(of operation: Op) -> [Op] {
        let dependencies = operation.withState { machine -> [Op] in
            guard machine.lifecycle == .pending, !machine.isCancelled else { return [] }
            return machine.dependencies
        }
        return dependencies.filter { !$0.isFinished }
    }

    /// Everything `operation` waits for: its blocking dependencies and, in a queue with pending
    /// barriers, what the barriers make it wait for (in whichever queue it is).
    static func waits(of operation: Op) -> [Op] {
        let queue = operation.withState { $0.lifecycle == .pending ? $0.queue : nil }
        let dependencies = blockingDependencies(of: operation)
        guard let queue else { return dependencies }
        return dependencies + queue.barrierWaits(of: operation)
    }

    /// A path from `start` to `target` along blocking dependencies, `start` first and `target`
    /// last, or `nil` if there is none within `limit` visited operations.
    static func blockingPath(from start: Op, to target: Op, limit: Int = searchLimit) -> [Op]? {
        // The usual case costs one look and no allocation: the start waits for nothing.
        let first = blockingDependencies(of: start)
        if first.isEmpty { return nil }
        if first.count == 1, first[0] === target { return [start, target] }
        var parent: [ObjectIdentifier: Op] = [:]
        var visited: Set<ObjectIdentifier> = [ObjectIdentifier(start)]
        var stack = [start]
        while let node = stack.popLast() {
            if node === target {
                return path(to: node, parents: parent)
            }
            if visited.count > limit { return nil }
            for next in blockingDependencies(of: node) where visited.insert(ObjectIdentifier(next)).inserted {
                parent[ObjectIdentifier(next)] = node
                stack.append(next)
            }
        }
        return nil
    }

    /// Called after `dependent` started to wait for `dependency`: ends the operations of the cycle
    /// this closes, if any.
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
              let path = blockingPath(from: dependency, to: dependent,
                                      limit: isBackward ? searchLimit : forwardSearchLimit) else { return }
        // path: dependency → … → dependent, each waiting for the next; the dependent waits for
        // the dependency, which closes the loop. List it from the dependent.
        end(cycle: [dependent] + path.dropLast())
    }

    /// Called before a thread blocks waiting for `operation`: if it is pending, in no queue, and on
    /// a cycle, the cycle is ended so that the wait returns. (Operations in a queue are covered by
    /// the queue's stall check.)
    static func checkBeforeWaiting(for operation: Op) {
        guard operation.withState({ $0.lifecycle == .pending && !$0.isCancelled && !$0.isEnqueued }) else { return }
        for cycle in cycles(from: [operation], successors: waits) {
            end(cycle: cycle)
        }
    }

    /// `count` backward edges stopped holding their dependents back.
    @inline(__always)
    static func backwardEdgesResolved(_ count: Int) {
        if count > 0 {
            backwardEdges.subtract(count, ordering: .relaxed)
        }
    }

    /// One backward edge stopped holding its dependent back.
    static func backwardEdgeResolved(dependentSerial: UInt64, dependencySerial: UInt64) {
        if dependencySerial > dependentSerial {
            backwardEdges.subtract(1, ordering: .relaxed)
        }
    }

    /// Ends every operation of `cycle` with a ``DependencyCycleError`` and reports it.
    static func end(cycle: [Op]) {
        // Searches run concurrently: a cycle found from a snapshot may already be broken (one of
        // its operations started). Every operation of a live cycle is still pending; some may have
        // been ended by an overlapping cycle already (they keep waiting behind a barrier), and
        // keep their first error.
        let isLive = cycle.allSatisfy { operation in
            operation.withState { $0.lifecycle == .pending }
        }
        guard isLive else { return }
        let error = DependencyCycleError(operations: cycle.map(\.description))
        // Mark every operation first, then act: ending one operation lets its dependents on the
        // cycle become ready, and they must already be cancelled by then so that none runs.
        let actions = cycle.map { operation in (operation, operation.markFailed(with: error)) }
        let endsSomething = actions.contains { _, action in
            if case .none = action { return false }
            return true
        }
        // Reported before the operations finish, so that whoever waits for them sees the report.
        if endsSomething {
            OpDiagnostics.report(.dependencyCycle(error))
        }
        for (operation, action) in actions {
            operation.performFail(action)
        }
        // The operations keep their dependencies, and these form a loop of strong references:
        // remove the dependencies between them so that they can be released.
        let members = Set(cycle.map(ObjectIdentifier.init))
        for operation in cycle {
            for dependency in operation.dependencies where members.contains(ObjectIdentifier(dependency)) {
                operation.removeDependency(dependency)
            }
        }
    }

    // MARK: Strongly connected components

    /// The cycles of the graph reachable from `roots` along `successors`: one cycle per strongly
    /// connected component of two or more operations, as a path in which each operation depends
    /// on the next and the last on the first. Iterative (Tarjan's algorithm), so long chains do
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

    /// A simple cycle through the first member of a strongly connected component.
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
    private static func path(to end: Op, parents: [ObjectIdentifier: Op]) -> [Op] {
        var path = [end]
        var current = end
        while let previous = parents[ObjectIdentifier(current)] {
            path.append(previous)
            current = previous
        }
        return path.reversed()
    }
}
