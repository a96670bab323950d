@testable import Operations

/// A randomly generated stress scenario: queues, operations with their dependencies, and the
/// driver's script (additions interleaved with barriers, suspensions and cancellations).
///
/// It is a plan only, a pure function of the seed and the configuration; ``StressHarness`` runs
/// it. Dependencies only go from an operation to operations created before it, so the graph is a
/// DAG, except for the back edges of cycle scenarios.
struct StressScenario: Sendable {
    /// How an operation is implemented.
    enum Kind: Sendable, Equatable {
        /// An `Op` subclass whose `main()` is the body.
        case sync
        /// A plain `BlockOp` with this many execution blocks.
        case block(blocks: Int)
        /// An `InvocationOp<Int>` whose invocation is the body and returns the node's id.
        case invocation
        /// An `AsyncOp` subclass whose work finishes as `Finisher` says.
        case async(Finisher)
        /// A block added with `addBarrierBlock(_:)`.
        case barrier
    }

    /// Where an asynchronous operation calls `finish()`.
    enum Finisher: Sendable, Equatable {
        /// Inside `execute()`, on the thread that started it.
        case inline
        /// From `DispatchQueue.global().async`.
        case global
        /// From `DispatchQueue.global().asyncAfter`, after a few microseconds.
        case globalAfter(microseconds: Int)
        /// From a serial Dispatch queue shared by the scenario.
        case serialQueue
        /// Not called by the test: the work is the operation's `async` body, which the library
        /// runs in a `Task` and finishes when it returns.
        case asyncBody
    }

    /// Whether and when the operation is cancelled by its own plan (the driver may cancel it too).
    enum Cancellation: Sendable, Equatable {
        case none
        /// Cancelled before it is added to its queue: it must finish without running.
        case beforeAdding
        /// Its body cancels it from another thread and checks that it sees the cancellation.
        case duringExecution
    }

    /// A pause inside a body, to shake the interleavings.
    enum Pause: Sendable, Equatable {
        case none
        case spin(microseconds: Int)
        case block(microseconds: Int)
    }

    /// One queue.
    struct Queue: Sendable {
        /// `maxConcurrentOperationCount`: 1...8, or -1 (the default).
        var width: Int
        /// Whether it is suspended while the first operations are added.
        var startsSuspended: Bool
    }

    /// One operation (or barrier).
    struct Node: Sendable {
        let id: Int
        var kind: Kind
        var queue: Int
        var priority: Op.QueuePriority = .normal
        /// Earlier operations it depends on (added before it is added to its queue).
        var dependencies: [Int] = []
        var cancellation: Cancellation = .none
        var isObserved = false
        var hasCompletionBlock = false
        var pause: Pause = .none
        /// The child its body creates and adds to `OpQueue.current`.
        var child: Int?
        /// The operation whose body creates this one.
        var parent: Int?
        /// Whether this child depends on its parent (which is executing when it is added).
        var dependsOnParent = false

        var isBarrier: Bool { kind == .barrier }
        var isChild: Bool { parent != nil }
    }

    /// One step of the driver's script.
    enum Step: Sendable {
        /// Creates these operations and adds them with one `addOperations` call.
        case add([Int], queue: Int)
        /// Adds this barrier node with `addBarrierBlock`.
        case addBarrier(Int)
        case suspend(queue: Int)
        case resume(queue: Int)
        /// Cancels the operation if it exists (a child may not have been created yet).
        case cancel(Int)
        case cancelAll(queue: Int)
        /// Spins on the driver's thread.
        case pause(microseconds: Int)
    }

    /// An extra dependency added once every operation is in its (suspended) queue.
    struct BackEdge: Sendable {
        let dependent: Int
        let dependency: Int
    }

    let seed: UInt64
    var queues: [Queue] = []
    var nodes: [Node] = []
    var steps: [Step] = []
    var backEdges: [BackEdge] = []

    /// The operations the driver creates, not counting children and barriers.
    var regularCount: Int { nodes.count { !$0.isChild && !$0.isBarrier } }
}

// MARK: - Generation

extension StressScenario {
    /// Generates the scenario for `seed`.
    static func generate(seed: UInt64, config: StressConfig) -> StressScenario {
        var rng = SplitMix64(seed: seed)
        var scenario = StressScenario(seed: seed)
        let queueCount = Int.random(in: config.queueCount, using: &rng)
        for _ in 0..<queueCount {
            let width: Int
            switch Int.random(in: 0..<20, using: &rng) {
            case 0..<5: width = OpQueue.defaultMaxConcurrentOperationCount
            case 5..<12: width = 1
            default: width = Int.random(in: 2...8, using: &rng)
            }
            scenario.queues.append(Queue(width: width, startsSuspended: config.isCycleScenario || rng.chance(0.3)))
        }

        let target = Int.random(in: config.operationCount, using: &rng)
        var regular: [Int] = []
        var cancellable: [Int] = []
        var batch: [Int] = []
        var batchQueue = -1
        var batchLimit = 1

        func flush() {
            guard !batch.isEmpty else { return }
            scenario.steps.append(.add(batch, queue: batchQueue))
            batch = []
        }

        func event() {
            let roll = Double.random(in: 0..<1, using: &rng)
            let queue = Int.random(in: 0..<queueCount, using: &rng)
            var threshold = config.barrierShare
            if roll < threshold {
                let id = scenario.nodes.count
                scenario.nodes.append(Node(id: id, kind: .barrier, queue: queue))
                scenario.steps.append(.addBarrier(id))
                return
            }
            threshold += config.suspensionShare
            if roll < threshold {
                scenario.steps.append(rng.chance(0.5) ? .suspend(queue: queue) : .resume(queue: queue))
                return
            }
            threshold += config.cancelShare
            if roll < threshold {
                if !cancellable.isEmpty {
                    scenario.steps.append(.cancel(rng.pick(cancellable)))
                }
                return
            }
            threshold += config.cancelAllShare
            if roll < threshold {
                scenario.steps.append(.cancelAll(queue: queue))
                return
            }
            scenario.steps.append(.pause(microseconds: Int.random(in: 1...200, using: &rng)))
        }

        while regular.count < target {
            let id = scenario.nodes.count
            var node = Node(id: id, kind: randomKind(config, &rng), queue: Int.random(in: 0..<queueCount, using: &rng))
            node.priority = rng.pick(Op.QueuePriority.allCases)
            node.dependencies = randomDependencies(among: regular, config, &rng)
            node.isObserved = rng.chance(config.observed)
            node.hasCompletionBlock = rng.chance(config.completionBlock)
            node.pause = randomPause(config, &rng)
            if rng.chance(config.cancelBeforeAdding) {
                node.cancellation = .beforeAdding
            } else if node.canCancelItself, rng.chance(config.cancelDuringExecution) {
                node.cancellation = .duringExecution
            }
            scenario.nodes.append(node)
            regular.append(id)
            cancellable.append(id)

            if node.canAddChild, rng.chance(config.addsChild) {
                let childID = scenario.nodes.count
                var child = Node(id: childID, kind: .sync, queue: node.queue, parent: id)
                child.priority = rng.pick(Op.QueuePriority.allCases)
                child.dependsOnParent = rng.chance(0.5)
                child.isObserved = rng.chance(config.observed)
                child.hasCompletionBlock = rng.chance(config.completionBlock)
                child.pause = randomPause(config, &rng)
                scenario.nodes.append(child)
                scenario.nodes[id].child = childID
                cancellable.append(childID)
            }

            if batchQueue != node.queue || batch.count >= batchLimit {
                flush()
                batchQueue = node.queue
                batchLimit = Int.random(in: 1...8, using: &rng)
            }
            batch.append(id)
            if rng.chance(config.event) {
                flush()
                event()
            }
        }
        flush()
        if !config.isCycleScenario {
            for _ in 0..<Int.random(in: config.tailEvents, using: &rng) {
                event()
            }
        }
        scenario.backEdges = randomBackEdges(scenario, regular: regular, config, &rng)
        return scenario
    }

    private static func randomKind(_ config: StressConfig, _ rng: inout SplitMix64) -> Kind {
        var roll = Double.random(in: 0..<1, using: &rng)
        if roll < config.blockShare { return .block(blocks: Int.random(in: 1...3, using: &rng)) }
        roll -= config.blockShare
        if roll < config.invocationShare { return .invocation }
        roll -= config.invocationShare
        if roll < config.asyncShare {
            switch Int.random(in: 0..<13, using: &rng) {
            case 0..<2: return .async(.inline)
            case 2..<6: return .async(.global)
            case 6..<8: return .async(.globalAfter(microseconds: Int.random(in: 1...200, using: &rng)))
            case 8..<10: return .async(.serialQueue)
            default: return .async(.asyncBody)
            }
        }
        return .sync
    }

    /// Up to `maximumDependencies` distinct earlier operations, mostly recent ones (long chains),
    /// sometimes any.
    private static func randomDependencies(among regular: [Int], _ config: StressConfig, _ rng: inout SplitMix64) -> [Int] {
        guard !regular.isEmpty, !rng.chance(0.3) else { return [] }
        let count = Int.random(in: 1...config.maximumDependencies, using: &rng)
        var chosen: [Int] = []
        for _ in 0..<count {
            let candidate: Int
            if rng.chance(0.7) {
                candidate = regular[max(0, regular.count - 16)...].randomElement(using: &rng)!
            } else {
                candidate = rng.pick(regular)
            }
            if !chosen.contains(candidate) { chosen.append(candidate) }
        }
        return chosen
    }

    private static func randomPause(_ config: StressConfig, _ rng: inout SplitMix64) -> Pause {
        guard rng.chance(config.pause) else { return .none }
        if rng.chance(0.7) { return .spin(microseconds: Int.random(in: 1...50, using: &rng)) }
        return .block(microseconds: Int.random(in: 20...300, using: &rng))
    }

    /// Extra edges over the finished graph: most of them from an operation to one that depends on
    /// it (transitively), which closes a cycle, the others to an unrelated operation.
    private static func randomBackEdges(_ scenario: StressScenario, regular: [Int], _ config: StressConfig, _ rng: inout SplitMix64) -> [BackEdge] {
        guard config.isCycleScenario, regular.count > 2 else { return [] }
        var dependencies = scenario.nodes.map(\.dependencies)
        var edges: [BackEdge] = []
        // The first edge closes a cycle whenever the graph has a dependency at all.
        let waitedFor = regular.filter { id in regular.contains { dependencies[$0].contains(id) } }
        for index in 0..<Int.random(in: config.backEdges, using: &rng) {
            let dependent = index == 0 && !waitedFor.isEmpty ? rng.pick(waitedFor) : rng.pick(regular)
            // Everything that (transitively) depends on `dependent`.
            let waiting = Set(regular.filter { StressScenario.path(from: $0, to: dependent, dependencies) && $0 != dependent })
            let dependency: Int?
            if !waiting.isEmpty, index == 0 || rng.chance(0.75) {
                dependency = rng.pick(Array(waiting).sorted())
            } else {
                let unrelated = regular.filter { $0 != dependent && !waiting.contains($0) && !dependencies[dependent].contains($0) }
                dependency = unrelated.isEmpty ? nil : rng.pick(unrelated)
            }
            guard let dependency, !dependencies[dependent].contains(dependency) else { continue }
            dependencies[dependent].append(dependency)
            edges.append(BackEdge(dependent: dependent, dependency: dependency))
        }
        return edges
    }

    /// Whether `start` (transitively) depends on `target`, following `dependencies` and skipping
    /// the operations in `excluded`.
    static func path(from start: Int, to target: Int, _ dependencies: [[Int]], excluded: Set<Int> = []) -> Bool {
        var visited: Set<Int> = [start]
        var stack = [start]
        while let node = stack.popLast() {
            if node == target { return true }
            for next in dependencies[node] where !excluded.contains(next) && visited.insert(next).inserted {
                stack.append(next)
            }
        }
        return false
    }
}

extension StressScenario.Node {
    /// Sync and async operations hold a reference to themselves in their body, so they can cancel
    /// themselves from another thread.
    var canCancelItself: Bool {
        switch kind {
        case .sync, .async: true
        case .block, .invocation, .barrier: false
        }
    }

    /// Sync and async operations run their body with `OpQueue.current` set to their queue.
    var canAddChild: Bool { canCancelItself }
}
