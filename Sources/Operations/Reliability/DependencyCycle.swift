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

    /// Whether every edge of the cycle still holds: each operation is pending and waits for the
    /// next, through a dependency that holds it back (it is not cancelled, and lists the next one,
    /// which is unfinished) or through a barrier (both are pending in the same queue, where
    /// barriers, once found between two members, stay between them until one of them leaves).
    ///
    /// Call with the locks of all its operations held (``LockTable/withLocks(of:_:)``).
    func isIntactLocked() -> Bool {
        for index in operations.indices {
            let waiting = operations[index]
            let next = operations[(index + 1) % operations.count]
            guard waiting.machine.lifecycle == .pending, next.machine.lifecycle == .pending else { return false }
            let throughDependency = !waiting.machine.isCancelled && waiting.machine.lists(next)
            let throughBarrier = barrierEdges[index] && waiting.machine.queue != nil
                && waiting.machine.queue === next.machine.queue
            guard throughDependency || throughBarrier else { return false }
        }
        return true
    }
}
