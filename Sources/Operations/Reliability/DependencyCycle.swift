/// A dependency cycle found by a search: operations that each wait for the next, the last for
/// the first, so that none of them can ever start.
struct DependencyCycle {
    /// The operations, starting with the oldest one, each waiting for the next.
    let operations: [Op]
    /// Whether operation `i` may wait for operation `i + 1` because of a barrier of their queue
    /// (rather than a dependency).
    let barrierEdges: [Bool]
    /// The error that names the cycle. The descriptions are taken when the cycle is found,
    /// outside every lock (`description` may be overridden).
    let error: DependencyCycleError

    /// Makes the cycle of `path`, in which each operation waits for the next and the last for the
    /// first; `barrierEdges[i]` tells whether `path[i]` may wait for its successor because of a
    /// barrier. The cycle is turned to start at its oldest operation, so that a cycle is described
    /// the same way whichever search found it.
    init(path: [Op], barrierEdges: [Bool]) {
        precondition(path.count == barrierEdges.count && path.count > 1, "Internal inconsistency: a cycle of \(path.count)")
        let start = path.indices.min { path[$0].serial < path[$1].serial }!
        operations = Array(path[start...] + path[..<start])
        self.barrierEdges = Array(barrierEdges[start...] + barrierEdges[..<start])
        error = DependencyCycleError(operations: operations.map(\.description))
    }

    /// Identifies the cycle by its set of operations.
    var key: [UInt64] { operations.map(\.serial).sorted() }

    /// Whether every edge of the cycle held at one moment: each operation was pending and waited
    /// for the next, through a dependency that held it back (it was not cancelled, and listed the
    /// next one, which was unfinished) or through a barrier (both were pending in the same queue,
    /// where barriers, once found between two members, stay between them until one of them
    /// leaves); or it was an executing ``GroupOp`` and the next one, unfinished, its child.
    ///
    /// Each operation is looked at under its own lock, one at a time, twice over (a double
    /// collect). Being pending, executing and cancelled only ever change one way, a group cannot
    /// finish before its children, and an operation counts the changes of its dependency list: if
    /// both looks saw the same, every edge held at the moment between the two looks, whatever
    /// changed meanwhile elsewhere.
    func isIntact() -> Bool {
        guard let first = look(), let second = look() else { return false }
        return first == second
    }

    /// One look at every edge: the dependency-list versions of the waiting operations (0 for a
    /// group waiting for a child), or `nil` if an edge does not hold.
    private func look() -> [UInt32]? {
        var versions: [UInt32] = []
        versions.reserveCapacity(operations.count)
        for index in operations.indices {
            let waiting = operations[index]
            let next = operations[(index + 1) % operations.count]
            let (nextLifecycle, nextQueue, nextGroup) = next.withState { ($0.lifecycle, $0.queue, $0.group) }
            let nextIsExecutingGroup = nextLifecycle == .executing && next is GroupOp
            guard nextLifecycle == .pending || nextIsExecutingGroup else { return nil }
            let version: UInt32? = waiting.withState { machine in
                switch machine.lifecycle {
                case .pending:
                    let throughDependency = !machine.isCancelled && machine.lists(next)
                    let throughBarrier = barrierEdges[index] && nextLifecycle == .pending
                        && machine.queue != nil && machine.queue === nextQueue
                    return throughDependency || throughBarrier ? machine.dependencyVersion : nil
                case .executing:
                    return waiting is GroupOp && nextGroup === waiting ? 0 : nil
                case .finishing, .finished:
                    return nil
                }
            }
            guard let version else { return nil }
            versions.append(version)
        }
        return versions
    }
}
