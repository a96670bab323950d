/// The search that tells whether a new edge closes a dependency cycle: from both of its ends at
/// once, stopping as soon as one end has nothing left to look at.
///
/// A new edge (`dependent` waits for `dependency`) closes a cycle if and only if `dependency`
/// already waits, directly or through other operations, for `dependent`. One side of the search
/// follows what operations wait *for*, from `dependency` (``DependencyCycles/blockingDependencies(of:)``);
/// the other follows what waits for them, from `dependent`
/// (``DependencyCycles/waiters(of:)``). Both follow only edges that hold an operation back, and
/// see through executing groups. The sides take turns by work (operations looked at and edges
/// read): each step goes to the side that is less busy once it is made, so that one side does not
/// read a long list of edges while the other has cheaper looks to make. The search ends when:
///
/// - they meet: the operations each has reached, joined, are the cycle;
/// - one side has reached everything it can without meeting the other: there is no cycle (the
///   dependency cannot reach the dependent, or nothing the dependent reaches is the dependency);
/// - both have reached `limit` operations: the search gives up (the stalled queue's search and
///   the waits find a longer cycle, see ``DependencyCycles``).
///
/// So a search costs about twice the smaller of the two sides, not the larger: building a graph
/// from its first operations on (each new dependent is waited for by nothing yet) or from its
/// last ones on (each new dependency waits for nothing yet) costs a look or two per edge, whatever
/// order the operations were created in, and joining two chains costs the shorter one (over the
/// build of a chain in any order, O(n log n)). The dependency's side is a complete search by itself,
/// depth first up to `limit` operations, as the library's search was when it had one side: the
/// other side only ends the search earlier, with the cycle or with a proof that there is none, so
/// every cycle that the one-sided search found is found, and more.
struct DependencyCycleSearch {
    /// The cycle the edge closes, starting with the dependent, each operation waiting for the
    /// next and the last for the dependent; `nil` if none was found.
    let cycle: [Op]?
    /// How many operations the search reached, both sides together (for the tests of its cost).
    let visited: Int

    /// Searches whether `dependent`, pending and not cancelled, waiting for `dependency` closes a
    /// cycle, looking at up to `limit` operations on each side.
    static func run(dependent: Op, dependency: Op, limit: Int) -> DependencyCycleSearch {
        // The usual case costs a look or two and no allocation: nothing waits for the dependent
        // (a graph built from its first operations on), or the dependency waits for nothing (one
        // built from its last operations on).
        let waitersCost = Direction.waiters.cost(of: dependent)
        if waitersCost == 0 { return DependencyCycleSearch(cycle: nil, visited: 1) }
        let dependenciesCost = Direction.dependencies.cost(of: dependency)
        if dependenciesCost == 0 { return DependencyCycleSearch(cycle: nil, visited: 2) }

        var dependencies = Side(root: dependency, direction: .dependencies, limit: limit, rootCost: dependenciesCost)
        var waiters = Side(root: dependent, direction: .waiters, limit: limit, rootCost: waitersCost)
        while true {
            let visited = dependencies.nodes.count + waiters.nodes.count
            // One side reached everything it can without meeting the other: no cycle.
            if dependencies.isExhausted || waiters.isExhausted {
                return DependencyCycleSearch(cycle: nil, visited: visited)
            }
            let dependenciesGoOn = !dependencies.isOverLimit
            let waitersGoOn = !waiters.isOverLimit
            if !dependenciesGoOn && !waitersGoOn {
                return DependencyCycleSearch(cycle: nil, visited: visited)
            }
            let meeting: [Op]?
            if dependenciesGoOn && (!waitersGoOn || dependencies.nextWork() <= waiters.nextWork()) {
                meeting = dependencies.expandNext(meeting: waiters)
            } else {
                meeting = waiters.expandNext(meeting: dependencies)
            }
            if let meeting {
                return DependencyCycleSearch(cycle: meeting, visited: dependencies.nodes.count + waiters.nodes.count)
            }
        }
    }

    /// Which edges a side follows.
    private enum Direction {
        /// What an operation waits for: from the dependency.
        case dependencies
        /// What waits for an operation: from the dependent.
        case waiters

        /// The operations one step away from `operation`.
        func next(from operation: Op) -> [Op] {
            switch self {
            case .dependencies: DependencyCycles.blockingDependencies(of: operation)
            case .waiters: DependencyCycles.waiters(of: operation)
            }
        }

        /// About how many edges looking at `operation` reads: one look at it, without retaining
        /// anything.
        func cost(of operation: Op) -> Int {
            operation.withState { machine in
                switch self {
                case .dependencies:
                    switch machine.lifecycle {
                    case .pending: machine.isCancelled ? 0 : machine.dependencyList.count
                    case .executing: operation is GroupOp ? 1 : 0
                    case .finishing, .finished: 0
                    }
                case .waiters:
                    machine.isFinished ? 0 : machine.dependents.count + (machine.isGroupChild ? 1 : 0)
                }
            }
        }
    }

    /// One side of the search: the operations it reached, depth first (the dependency's side in
    /// the order of the one-sided search it replaced, so that it alone finds what that found).
    private struct Side {
        let direction: Direction
        let limit: Int
        /// Every operation reached, in the order reached; the first is the side's root.
        var nodes: [Op]
        /// For each of `nodes`, the index of the one it was reached from (-1 for the root).
        var parents: [Int]
        /// The index of each reached operation in `nodes`.
        var indices: [ObjectIdentifier: Int]
        /// The indices of the operations reached and not looked at yet; the last is next.
        var unexplored: [Int] = [0]
        /// The edges read and operations looked at so far.
        var work = 0
        /// The cost of looking at the next operation, once asked.
        var nextCost: Int?

        init(root: Op, direction: Direction, limit: Int, rootCost: Int) {
            self.direction = direction
            self.limit = limit
            nodes = [root]
            parents = [-1]
            indices = [ObjectIdentifier(root): 0]
            nextCost = rootCost
        }

        /// Whether every operation reached has been looked at: the side has reached all it can.
        var isExhausted: Bool { unexplored.isEmpty }

        /// Whether the side reached more than `limit` operations, and stops.
        var isOverLimit: Bool { nodes.count > limit }

        /// The work done once the next operation has been looked at.
        mutating func nextWork() -> Int {
            if nextCost == nil { nextCost = direction.cost(of: nodes[unexplored[unexplored.count - 1]]) }
            return work + 1 + nextCost!
        }

        /// Looks at the next operation; returns the cycle if one of the operations one step from it
        /// was reached by `other`.
        mutating func expandNext(meeting other: Side) -> [Op]? {
            let index = unexplored.removeLast()
            nextCost = nil
            let successors = direction.next(from: nodes[index])
            work += 1 + successors.count
            for successor in successors {
                let id = ObjectIdentifier(successor)
                if let otherIndex = other.indices[id] {
                    return cycle(meetingAt: otherIndex, of: other, from: index)
                }
                if indices[id] == nil {
                    indices[id] = nodes.count
                    unexplored.append(nodes.count)
                    nodes.append(successor)
                    parents.append(index)
                }
            }
            return nil
        }

        /// The operations from the root to `nodes[index]`.
        func path(to index: Int) -> [Op] {
            var path: [Op] = []
            var current = index
            while current >= 0 {
                path.append(nodes[current])
                current = parents[current]
            }
            return path.reversed()
        }

        /// The cycle through the operation that this side reaches one step from `nodes[index]`
        /// and `other` reached as its `otherIndex`th.
        func cycle(meetingAt otherIndex: Int, of other: Side, from index: Int) -> [Op] {
            // The dependency's side runs from the dependency to the meeting point, each waiting for
            // the next; the dependent's side from the meeting point to the dependent.
            let (fromDependency, toDependent): ([Op], [Op])
            switch direction {
            case .dependencies:
                fromDependency = path(to: index) + [other.nodes[otherIndex]]
                toDependent = Array(other.path(to: otherIndex).reversed().dropFirst())
            case .waiters:
                fromDependency = other.path(to: otherIndex)
                toDependent = path(to: index).reversed()
            }
            let loop = fromDependency + toDependent   // dependency … dependent
            return [loop[loop.count - 1]] + loop.dropLast()
        }
    }
}
