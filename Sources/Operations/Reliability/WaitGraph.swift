/// The graph that cycle and deadlock searches follow: which operations each operation waits for.
///
/// A pending operation waits for its dependencies that hold it back (it is not cancelled, and
/// they have not finished), an executing ``GroupOp`` for its unfinished children, and, in a queue with pending barriers, for what the barriers make it
/// wait for (see ``BarrierWaits``; a cancelled operation still waits for the barrier before it).
/// One graph serves one search: it takes each queue's barrier waits once, and remembers which
/// edges come from barriers.
final class WaitGraph {
    /// The barrier waits of each queue met so far.
    private var barrierWaits: [ObjectIdentifier: BarrierWaits] = [:]
    /// Kept alive while their identifiers key `barrierWaits`.
    private var queues: [OpQueue] = []
    /// The barrier successors of each operation visited.
    private var barrierSuccessors: [ObjectIdentifier: [Op]] = [:]
    /// Operations that count as unfinished even if they read as finished: the calling thread
    /// holds them up (it runs the observers of their finish, before their dependents are told),
    /// so what waits for them cannot start until it returns.
    private let heldUp: Set<ObjectIdentifier>

    /// A graph in which `heldUp` operations count as unfinished.
    init(heldUp: [Op] = []) {
        self.heldUp = Set(heldUp.map(ObjectIdentifier.init))
    }

    /// Everything `operation` waits for: dependencies, then barriers; for an executing group, its
    /// unfinished children (searches see through groups).
    func successors(of operation: Op) -> [Op] {
        let (dependencies, queue, isExecuting) = operation.withState { machine -> ([Op], OpQueue?, Bool) in
            guard machine.lifecycle == .pending else { return ([], nil, machine.lifecycle == .executing) }
            return (machine.isCancelled ? [] : machine.dependencies, machine.queue, false)
        }
        if isExecuting {
            return (operation as? GroupOp)?.unfinishedChildren ?? []
        }
        var successors = dependencies.filter { !$0.isFinished || heldUp.contains(ObjectIdentifier($0)) }
        if let queue, DependencyCycles.pendingBarriers.load(ordering: .relaxed) > 0 {
            let waits = barrierWaits(in: queue).waits(of: operation)
            if !waits.isEmpty {
                barrierSuccessors[ObjectIdentifier(operation)] = waits
                successors += waits
            }
        }
        return successors
    }

    /// Whether `operation` was found to wait for `next` because of a barrier.
    func waitsThroughBarrier(_ operation: Op, for next: Op) -> Bool {
        barrierSuccessors[ObjectIdentifier(operation)]?.contains { $0 === next } ?? false
    }

    /// The cycle of `path` (each operation waiting for the next, the last for the first).
    func cycle(along path: [Op]) -> DependencyCycle {
        let barrierEdges = path.indices.map { index in
            waitsThroughBarrier(path[index], for: path[(index + 1) % path.count])
        }
        return DependencyCycle(path: path, barrierEdges: barrierEdges)
    }

    /// A path from `start` to one of `targets` (`start` first), or `nil` if there is none within
    /// `limit` visited operations.
    func path(from start: Op, toAnyOf targets: Set<ObjectIdentifier>, limit: Int = .max) -> [Op]? {
        if targets.contains(ObjectIdentifier(start)) { return [start] }
        var parents: [ObjectIdentifier: Op] = [:]
        var visited: Set<ObjectIdentifier> = [ObjectIdentifier(start)]
        var stack = [start]
        while let node = stack.popLast() {
            if visited.count > limit { return nil }
            for next in successors(of: node) where visited.insert(ObjectIdentifier(next)).inserted {
                parents[ObjectIdentifier(next)] = node
                if targets.contains(ObjectIdentifier(next)) {
                    return DependencyCycles.path(to: next, parents: parents)
                }
                stack.append(next)
            }
        }
        return nil
    }

    private func barrierWaits(in queue: OpQueue) -> BarrierWaits {
        let id = ObjectIdentifier(queue)
        if let waits = barrierWaits[id] { return waits }
        let waits = queue.barrierWaits()
        barrierWaits[id] = waits
        queues.append(queue)
        return waits
    }
}
