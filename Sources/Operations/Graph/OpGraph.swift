/// A picture of a graph of operations: the operations, their dependencies (followed
/// transitively) and their groups, rendered as Graphviz DOT (``dot``) or Mermaid (``mermaid``).
///
/// ```swift
/// let graph = OpGraph([manifest] + downloads)
/// print(graph.dot)        // pipe into `dot -Tsvg > graph.svg`
/// ```
///
/// Each node shows the operation's name (or type and address), type, state, priority and queue.
/// Edges point from a dependency to its dependent. A ``GroupOp``'s children are drawn inside a
/// cluster of the group. Operations on a dependency cycle, and failed ones (with an
/// ``Op/error``), are drawn in red; finished ones are greyed.
///
/// The graph is a snapshot, taken when it is created; it holds no operation.
public struct OpGraph: Sendable {
    /// One operation of the graph.
    public struct Node: Sendable, Hashable {
        /// The node's number in the graph (its index in ``OpGraph/nodes``).
        public let id: Int
        /// The operation's ``Op/description``.
        public let label: String
        /// The operation's type name.
        public let type: String
        /// `pending`, `ready`, `executing`, `finished` or `cancelled` (a cancelled operation that
        /// finished reads `cancelled`).
        public let state: String
        /// The operation's ``Op/queuePriority``.
        public let priority: Op.QueuePriority
        /// The name (or description) of the operation's queue, if it is in one.
        public let queue: String?
        /// The node of the group the operation is a child of, if it is in the graph.
        public let group: Int?
        /// Whether the operation is a ``GroupOp`` (drawn as a cluster of its children).
        public let isGroup: Bool
        /// Whether the operation finished with an error.
        public let hasFailed: Bool
        /// Whether the operation is on a dependency cycle among the graph's operations.
        public let isOnCycle: Bool
        /// Whether the operation has finished.
        public let isFinished: Bool
    }

    /// A dependency: `dependent` waits for `dependency`.
    public struct Edge: Sendable, Hashable {
        /// The node of the dependency.
        public let dependency: Int
        /// The node of the dependent.
        public let dependent: Int
    }

    /// The operations, in the order they were found (those passed first).
    public let nodes: [Node]
    /// The dependencies among them.
    public let edges: [Edge]

    /// The graph of `operations`: they, their dependencies (and theirs, transitively), and the
    /// children of the groups among them (those a group still holds: see ``GroupOp/children``).
    public init(_ operations: some Sequence<Op>) {
        var found: [Op] = []
        var index: [ObjectIdentifier: Int] = [:]
        var pending = Array(operations)
        pending.reverse()
        while let operation = pending.popLast() {
            guard index[ObjectIdentifier(operation)] == nil else { continue }
            index[ObjectIdentifier(operation)] = found.count
            found.append(operation)
            let next = operation.dependencies + ((operation as? GroupOp)?.children ?? [])
            pending.append(contentsOf: next.reversed())
        }
        var edges: [Edge] = []
        var successors = Array(repeating: [Int](), count: found.count)
        for (dependent, operation) in found.enumerated() {
            for dependency in operation.dependencies {
                guard let from = index[ObjectIdentifier(dependency)] else { continue }
                edges.append(Edge(dependency: from, dependent: dependent))
                successors[from].append(dependent)
            }
        }
        let onCycle = OpGraph.nodesOnCycles(successors)
        nodes = found.enumerated().map { id, operation in
            let flags = operation.flags.load(ordering: .acquiring)
            let (queue, error) = operation.withState { ($0.queue, $0.error) }
            let state: String
            if flags & Op.Flags.cancelled != 0 {
                state = "cancelled"
            } else if flags & Op.Flags.finished != 0 {
                state = "finished"
            } else if flags & Op.Flags.executing != 0 {
                state = "executing"
            } else {
                state = flags & Op.Flags.ready != 0 ? "ready" : "pending"
            }
            let queueName = queue.flatMap { $0.isGroupQueue ? nil : ($0.name ?? $0.description) }
            return Node(
                id: id,
                label: operation.description,
                type: String(describing: type(of: operation)),
                state: state,
                priority: operation.queuePriority,
                queue: queueName,
                group: operation.group.flatMap { index[ObjectIdentifier($0)] },
                isGroup: operation is GroupOp,
                hasFailed: error != nil,
                isOnCycle: onCycle.contains(id),
                isFinished: flags & Op.Flags.finished != 0)
        }
        self.edges = edges
    }

    /// The graph of the operations in `queue` now (and their dependencies).
    public init(_ queue: OpQueue) {
        self.init(queue.operations)
    }

    /// The nodes on a cycle of `successors` (strongly connected components of more than one node,
    /// or with a self-loop), found with Tarjan's algorithm, iteratively.
    private static func nodesOnCycles(_ successors: [[Int]]) -> Set<Int> {
        let count = successors.count
        var order = Array(repeating: -1, count: count)
        var lowLink = Array(repeating: 0, count: count)
        var onStack = Array(repeating: false, count: count)
        var stack: [Int] = []
        var next = 0
        var result: Set<Int> = []
        for root in 0..<count where order[root] == -1 {
            var frames: [(node: Int, edge: Int)] = [(root, 0)]
            order[root] = next; lowLink[root] = next; next += 1
            stack.append(root); onStack[root] = true
            while let (node, edge) = frames.last {
                if edge < successors[node].count {
                    frames[frames.count - 1].edge += 1
                    let successor = successors[node][edge]
                    if order[successor] == -1 {
                        order[successor] = next; lowLink[successor] = next; next += 1
                        stack.append(successor); onStack[successor] = true
                        frames.append((successor, 0))
                    } else if onStack[successor] {
                        lowLink[node] = min(lowLink[node], order[successor])
                    }
                    continue
                }
                frames.removeLast()
                if let parent = frames.last?.node {
                    lowLink[parent] = min(lowLink[parent], lowLink[node])
                }
                guard lowLink[node] == order[node] else { continue }
                var component: [Int] = []
                while let member = stack.popLast() {
                    onStack[member] = false
                    component.append(member)
                    if member == node { break }
                }
                if component.count > 1 || successors[node].contains(node) {
                    result.formUnion(component)
                }
            }
        }
        return result
    }
}
