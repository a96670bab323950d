@testable import Operations

/// A randomly generated composition scenario: queues, operations, groups (nested, with widths and
/// `cancelsChildrenOnFailure`), conditions, exclusivity categories, observers, failures, children
/// added at run time, and the driver's script; and the control features (see
/// `CompositionControlPlans.swift`): `RetryOp`s whose attempts fail a planned number of times,
/// `timeout`s, `DelayOp`s, `ResultOp`/`AsyncBlockOp` producers with `inject(from:)` consumers
/// and `map`s.
///
/// It is a plan only, a pure function of the seed; ``CompositionHarness`` runs it.
///
/// **Ids are a topological order.** A group's children get smaller ids than the group, and an
/// operation depends only on smaller ids, so the graph of dependencies plus "a group waits for its
/// children" is acyclic: no child depends on its own ancestor, nor on anything that depends on it.
///
/// **No deadlock by construction.** Beyond that graph, three things make an operation wait: a slot
/// of its queue (held by executing operations; only groups hold one while waiting, for their
/// children), an exclusivity category (held by plain operations, which finish by themselves, and by
/// groups, which wait for their children), and the start of its group (a child runs only once its
/// group runs). The plan keeps those waits acyclic:
/// - an operation with categories is only in a queue of unlimited width (a top-level queue of
///   width -1, or a group without `maxConcurrentOperationCount`): the library takes categories
///   before the slot, so a holder never waits for a slot a group keeps while its child needs the
///   category;
/// - a descendant of a group depends outside the group only on *free* operations: no group, no
///   category, in a queue whose slots no group can hold (unlimited, or without groups), inside no
///   group other than the dependent's ancestors, and depending only on free operations;
/// - a child added at run time uses only categories its exclusive ancestors hold for it (their
///   own), or any category if no ancestor is exclusive.
///
/// Retries, delays and the operations with a timeout finish by themselves, like plain operations:
/// a body that waits for its cancellation, and a 2 s delay, come only with a short timeout.
struct CompositionScenario: Sendable {
    /// How an operation is implemented.
    enum Kind: Sendable, Equatable {
        /// A `BlockOp`; `plain` is a `BlockOp` itself (not a subclass that records `cancel()`
        /// calls); `extraBlock` adds a second execution block.
        case block(plain: Bool, extraBlock: Bool)
        /// An `Op` subclass whose `main()` is the body.
        case sync
        /// An `AsyncOp` subclass whose `async` body the library runs in a task.
        case asyncBody
        /// An `AsyncOp` subclass whose `execute()` finishes from `DispatchQueue.global()`.
        case asyncCallback
        /// A `GroupOp` subclass.
        case group
        /// A `BlockOp` that only a `.dependency` condition adds to a queue (or a group).
        case permission
        /// A producer of an `Int`: a `ResultOp<Int>`, or an `AsyncBlockOp<Int>` if `async`.
        case producer(async: Bool)
        /// `map` of the producer `mapSource`: a `ResultOp<Int>`, or an `AsyncBlockOp<Int>`.
        case mapped(async: Bool)
        /// A `RetryOp` (see ``RetryPlan``).
        case retry
        /// A `DelayOp` of `delayMicroseconds`.
        case delay
    }

    /// How a body fails.
    enum Failure: Sendable, Equatable {
        case none
        /// The body calls `cancel(with:)` on its own operation.
        case cancelWithError
        /// An `async` body throws; a callback finishes with `finish(throwing:)` (others: as
        /// `cancelWithError`).
        case throwing
    }

    /// How a body adds the children it makes at run time.
    enum SpawnMode: Sendable, Equatable {
        /// `Op.current?.group?.addChild(_:)`.
        case addChild
        /// `Op.current?.produce(_:)` (to the group, or to the queue of a top-level operation).
        case produce
    }

    /// A condition; leaves are numbered per operation, so that their names are unique.
    indirect enum Condition: Sendable {
        case predicate(leaf: Int, passes: Bool)
        case evaluate(leaf: Int, passes: Bool, throwing: Bool, microseconds: Int)
        case noFailedDependencies
        case noCancelledDependencies
        case mutuallyExclusive(Int)
        case all([Condition])
        case any([Condition])
        case not(Condition)
        /// `.dependency(_:)` of the node of this id.
        case dependency(Int)
    }

    struct Queue: Sendable {
        /// `maxConcurrentOperationCount`: 1...4, or -1 (unlimited).
        var width: Int
        /// Whether top-level groups may go in it.
        var allowsGroups: Bool
        var startsSuspended: Bool
    }

    struct GroupPlan: Sendable {
        var maxConcurrent: Int?
        var cancelsChildrenOnFailure: Bool
        var allowsNestedGroups: Bool
        /// Children passed to `init(operations:)`, or added with `addChild`/`addChildren` before
        /// the group is added.
        var childrenViaInit: Bool
        /// The children added before the group starts, in order.
        var children: [Int] = []
    }

    struct Node: Sendable {
        let id: Int
        var kind: Kind
        /// The top-level queue (nil for a child of a group).
        var queue: Int?
        /// The direct parent group, if any.
        var group: Int?
        /// Earlier operations it depends on (besides those its `.dependency` conditions add).
        var dependencies: [Int] = []
        var conditions: [Condition] = []
        /// Its own exclusivity categories (from its conditions), sorted.
        var categories: [Int] = []
        /// How many observers it gets when it is created.
        var observers = 0
        var failure = Failure.none
        var cancelledBeforeAdding = false
        /// The body cancels its own group.
        var cancelsOwnGroup = false
        /// Children its body creates at run time.
        var spawns: [Int] = []
        /// The operation whose body creates this one.
        var spawner: Int?
        var spawnMode = SpawnMode.addChild
        /// Depends on its spawner (which is executing when it is added).
        var dependsOnSpawner = false
        var spinMicroseconds = 0
        var priority: Op.QueuePriority = .normal
        var groupPlan: GroupPlan?
        /// For a permission: the operation whose `.dependency` condition names it.
        var permissionFor: Int?
        /// Its `timeout`, if any.
        var timeoutMicroseconds: Int?
        /// The body waits (up to 2 s) until the operation is cancelled: only with a short timeout.
        var waitsForCancellation = false
        /// Its `inject(from:)`s, added after its conditions (before them if `injectionsFirst`).
        var injections: [Injection] = []
        var injectionsFirst = false
        /// For `.mapped`: the producer it maps.
        var mapSource: Int?
        var retryPlan: RetryPlan?
        var delayMicroseconds = 0
        /// A timer cancels it this long after it started executing.
        var cancelAfterStart: TimedCancel?

        var isDynamic: Bool { spawner != nil }
        var isGroup: Bool { kind == .group }
    }

    /// The driver's script.
    enum Step: Sendable {
        /// Creates every static operation with an id below this one that is not created yet.
        case create(upTo: Int)
        /// Adds top-level operations to a queue (one `addOperations` call, or one by one).
        case add([Int], queue: Int, oneByOne: Bool)
        /// Cancels an operation (a static one, or a child made at run time if it exists).
        case cancel(Int, withError: Bool)
        /// Adds an observer to an operation that may already run.
        case observe(Int)
        case pause(microseconds: Int)
        case resume(Int)
    }

    let seed: UInt64
    var queues: [Queue] = []
    var categoryCount = 1
    var nodes: [Node] = []
    var steps: [Step] = []

    // MARK: Structure

    /// The groups `id` is nested in, nearest first.
    func ancestors(of id: Int) -> [Int] {
        var result: [Int] = []
        var next = nodes[id].group
        while let group = next {
            result.append(group)
            next = nodes[group].group
        }
        return result
    }

    func isAncestor(_ group: Int, of id: Int) -> Bool {
        ancestors(of: id).contains(group)
    }

    /// Every descendant added before the group starts (children, theirs, ...).
    func staticDescendants(of group: Int) -> [Int] {
        guard let plan = nodes[group].groupPlan else { return [] }
        return plan.children.flatMap { [$0] + staticDescendants(of: $0) }
    }

    /// The categories a group asks for: its own and its static descendants', if it has any own.
    func requestedCategories(of group: Int) -> [Int] {
        let own = nodes[group].categories
        guard !own.isEmpty else { return [] }
        return Array(Set(own + staticDescendants(of: group).flatMap { nodes[$0].categories })).sorted()
    }

    /// The dependencies the operation gets: its own and those of its `.dependency` conditions.
    func allDependencies(of id: Int) -> [Int] {
        var result = nodes[id].dependencies
        for condition in nodes[id].conditions {
            for dependency in Self.dependencyTargets(of: condition) where !result.contains(dependency) {
                result.append(dependency)
            }
        }
        if nodes[id].dependsOnSpawner, let spawner = nodes[id].spawner, !result.contains(spawner) {
            result.append(spawner)
        }
        return result
    }

    static func dependencyTargets(of condition: Condition) -> [Int] {
        switch condition {
        case .dependency(let id): [id]
        case .all(let conditions), .any(let conditions): conditions.flatMap(dependencyTargets)
        case .not(let inner): dependencyTargets(of: inner)
        case .predicate, .evaluate, .noFailedDependencies, .noCancelledDependencies, .mutuallyExclusive: []
        }
    }

    static func categories(of condition: Condition) -> [Int] {
        switch condition {
        case .mutuallyExclusive(let category): [category]
        case .all(let conditions): conditions.flatMap(categories)
        default: []
        }
    }

    /// Whether the plan cancels `id`, or a group it is nested in, before adding it.
    func isCancelledBeforeAdding(_ id: Int) -> Bool {
        nodes[id].cancelledBeforeAdding || ancestors(of: id).contains { nodes[$0].cancelledBeforeAdding }
    }

    // MARK: Generation

    /// A scenario of about `operations` operations (children included).
    static func generate(seed: UInt64, operations: ClosedRange<Int> = 150...300) -> CompositionScenario {
        var generator = Generator(seed: seed, target: 0)
        generator.target = Int.random(in: operations, using: &generator.rng)
        return generator.generate()
    }
}

// MARK: - Generator

private struct Generator {
    typealias Scenario = CompositionScenario
    typealias Node = Scenario.Node
    typealias Condition = Scenario.Condition

    /// Where a new operation goes.
    struct Context {
        /// The top-level queue (for the outermost operation of a subtree).
        var queue: Int
        /// The open groups it is nested in (frame keys), nearest first.
        var frames: [Int] = []
        /// Whether its queue has no width limit (it may hold categories).
        var unlimited: Bool
        /// Whether no group can hold a slot of its queue while waiting (free operations live there).
        var slotSafe: Bool
        /// The own categories of its exclusive ancestors (nil if none is exclusive).
        var exclusiveAncestorCategories: Set<Int>?
        /// The own categories of the nearest exclusive group, to give its children the same.
        var nearestGroupCategories: [Int] = []
        var depth = 0
    }

    struct Frame {
        let key: Int
        var plan: Scenario.GroupPlan
        var categories: [Int]
    }

    var rng: SplitMix64
    var target: Int
    var scenario: Scenario
    /// Per node: the frames it is nested in, whether it is free, created ids of frames' groups.
    var nodeFrames: [[Int]] = []
    var isFree: [Bool] = []
    var frameGroup: [Int: Int] = [:]
    var frameCount = 0
    var openFrames: [Frame] = []

    init(seed: UInt64, target: Int) {
        rng = SplitMix64(seed: seed)
        self.target = target
        scenario = CompositionScenario(seed: seed)
    }

    mutating func generate() -> Scenario {
        let queueCount = Int.random(in: 2...4, using: &rng)
        for index in 0..<queueCount {
            // The first queue is unlimited (exclusive operations and groups), the second allows
            // groups; the others are random.
            let width = index == 0 ? -1 : rng.pick([-1, 1, 1, 2, 3, 4])
            let allowsGroups = index <= 1 || rng.chance(0.5)
            scenario.queues.append(.init(width: width, allowsGroups: allowsGroups, startsSuspended: rng.chance(0.3)))
        }
        scenario.categoryCount = Int.random(in: 1...3, using: &rng)
        while scenario.nodes.count < target {
            let queue = Int.random(in: scenario.queues.indices, using: &rng)
            let plan = scenario.queues[queue]
            let context = Context(queue: queue, unlimited: plan.width < 0, slotSafe: plan.width < 0 || !plan.allowsGroups)
            if plan.allowsGroups && rng.chance(0.14) {
                _ = makeGroup(context)
            } else {
                _ = makeLeaf(context)
            }
        }
        // A child's group is known only once the group is created: resolve it from the frames.
        for id in scenario.nodes.indices {
            if let frame = nodeFrames[id].first {
                scenario.nodes[id].group = frameGroup[frame]
                scenario.nodes[id].queue = nil
            }
        }
        makeSteps()
        return scenario
    }

    // MARK: Nodes

    private mutating func append(_ node: Node, _ context: Context) {
        precondition(node.id == scenario.nodes.count)
        scenario.nodes.append(node)
        nodeFrames.append(context.frames)
        let dependencies = scenario.allDependencies(of: node.id)
        let frames = Set(context.frames)
        isFree.append(!node.isGroup && node.categories.isEmpty && context.slotSafe && !node.isDynamic
            && dependencies.allSatisfy { isFree[$0] && Set(nodeFrames[$0]).isSubset(of: frames) })
        if let frame = context.frames.first, !node.isDynamic, node.kind != .permission,
           let index = openFrames.firstIndex(where: { $0.key == frame }) {
            openFrames[index].plan.children.append(node.id)
        }
    }

    /// The operations a new operation in `context` may depend on (see the type's notes).
    private func dependencyCandidates(_ context: Context, excludingFrame: Int? = nil) -> [Int] {
        let frames = Set(context.frames)
        let recent = max(0, scenario.nodes.count - 60)
        return (recent..<scenario.nodes.count).filter { id in
            let node = scenario.nodes[id]
            guard !node.isDynamic, node.kind != .permission else { return false }
            // A group never depends on its own descendants.
            if let excludingFrame, nodeFrames[id].contains(excludingFrame) { return false }
            if context.frames.isEmpty {
                // A top-level operation waits holding nothing: anything created before it. Only
                // not an operation of a subtree still open (there is none at the top level).
                return true
            }
            return isFree[id] && Set(nodeFrames[id]).isSubset(of: frames)
        }
    }

    private mutating func pickDependencies(_ context: Context, maximum: Int, excludingFrame: Int? = nil) -> [Int] {
        let candidates = dependencyCandidates(context, excludingFrame: excludingFrame)
        guard !candidates.isEmpty else { return [] }
        let count = Int.random(in: 0...maximum, using: &rng)
        var result: [Int] = []
        for _ in 0..<count {
            let id = rng.pick(candidates)
            if !result.contains(id) { result.append(id) }
        }
        return result.sorted()
    }

    private mutating func randomKind() -> Scenario.Kind {
        switch Double.random(in: 0..<1, using: &rng) {
        case ..<0.24: .block(plain: rng.chance(0.35), extraBlock: rng.chance(0.15))
        case ..<0.43: .sync
        case ..<0.58: .asyncBody
        case ..<0.74: .asyncCallback
        case ..<0.87: .producer(async: rng.chance(0.5))
        case ..<0.93: .retry
        default: .delay
        }
    }

    /// The control features of a leaf (see `CompositionControlPlans.swift`): a retry's or a
    /// delay's plan, injections from the producers among its dependencies (or a `map` of one of
    /// them), a timeout, a timed cancellation.
    private mutating func configureControl(_ node: inout Node) {
        let producers = node.dependencies.filter { scenario.nodes[$0].isProducer }
        switch node.kind {
        case .retry:
            node.retryPlan = .random(using: &rng)
            node.failure = .none
            node.cancelsOwnGroup = false
            if rng.chance(0.2) {
                node.cancelAfterStart = .init(microseconds: Int.random(in: 0...6_000, using: &rng), withError: rng.chance(0.5))
            }
        case .delay:
            node.delayMicroseconds = rng.chance(0.15) ? 0 : Int.random(in: 1...5_000, using: &rng)
            node.failure = .none
            node.cancelsOwnGroup = false
            if rng.chance(0.25) {
                node.cancelAfterStart = .init(microseconds: Int.random(in: 0...5_000, using: &rng), withError: rng.chance(0.5))
            }
        case .block, .sync, .asyncBody, .asyncCallback, .producer:
            if !producers.isEmpty, !node.isProducer, rng.chance(0.25) {
                node.kind = .mapped(async: rng.chance(0.4))
                node.mapSource = rng.pick(producers)
            } else {
                for producer in producers where rng.chance(0.75) {
                    node.injections.append(.init(producer: producer, throwing: rng.chance(0.05)))
                }
                node.injectionsFirst = rng.chance(0.5)
            }
        case .group, .permission, .mapped:
            break
        }
        if rng.chance(0.12) {
            addTimeout(&node)
        }
    }

    /// A timeout: a short one (0.3-4 ms, often shorter than the work: the body may wait for the
    /// cancellation, a delay may be 2 s long) or a long one (0.2-1 s, that should never pass).
    private mutating func addTimeout(_ node: inout Node) {
        let short = rng.chance(0.5)
        node.timeoutMicroseconds = short ? Int.random(in: 300...4_000, using: &rng) : Int.random(in: 200_000...1_000_000, using: &rng)
        guard short, rng.chance(0.5) else { return }
        switch node.kind {
        case .block, .sync, .asyncBody, .producer, .mapped: node.waitsForCancellation = true
        case .delay: node.delayMicroseconds = 2_000_000
        case .asyncCallback, .group, .permission, .retry: break
        }
    }

    /// One to two categories for an operation in `context`, or none.
    private mutating func pickCategories(_ context: Context, probability: Double, dynamic: Bool) -> [Int] {
        guard context.unlimited, rng.chance(probability) else { return [] }
        var allowed = Array(0..<scenario.categoryCount)
        if dynamic, let held = context.exclusiveAncestorCategories {
            allowed = held.sorted()
        }
        guard !allowed.isEmpty else { return [] }
        var chosen: [Int] = []
        if !context.nearestGroupCategories.isEmpty, rng.chance(0.6) {
            chosen.append(rng.pick(context.nearestGroupCategories.filter(allowed.contains).isEmpty
                ? allowed : context.nearestGroupCategories.filter(allowed.contains)))
        } else {
            chosen.append(rng.pick(allowed))
        }
        if rng.chance(0.25) { chosen.append(rng.pick(allowed)) }
        return Array(Set(chosen)).sorted()
    }

    /// A check condition: a leaf or a combinator of leaves (no exclusivity inside `any`/`not`).
    private mutating func randomCheck(_ leaves: inout Int, hasDependencies: Bool, depth: Int = 0) -> Condition {
        let roll = Double.random(in: 0..<1, using: &rng)
        if roll < 0.35 {
            leaves += 1
            return .predicate(leaf: leaves, passes: rng.chance(0.8))
        }
        if roll < 0.60 {
            leaves += 1
            let passes = rng.chance(0.8)
            return .evaluate(leaf: leaves, passes: passes, throwing: !passes && rng.chance(0.4),
                             microseconds: rng.chance(0.5) ? 0 : Int.random(in: 1...400, using: &rng))
        }
        if roll < 0.78 && hasDependencies {
            return rng.chance(0.75) ? .noFailedDependencies : .noCancelledDependencies
        }
        if depth > 0 {
            leaves += 1
            return .predicate(leaf: leaves, passes: rng.chance(0.8))
        }
        switch Int.random(in: 0..<4, using: &rng) {
        case 0:
            return .all((0..<Int.random(in: 1...3, using: &rng)).map { _ in randomCheck(&leaves, hasDependencies: hasDependencies, depth: 1) })
        case 1:
            return .any((0..<Int.random(in: 1...3, using: &rng)).map { _ in randomCheck(&leaves, hasDependencies: hasDependencies, depth: 1) })
        case 2:
            return rng.chance(0.1) ? .any([]) : .not(randomCheck(&leaves, hasDependencies: hasDependencies, depth: 1))
        default:
            return .not(.not(randomCheck(&leaves, hasDependencies: hasDependencies, depth: 1)))
        }
    }

    /// Conditions: random checks (`probability`), plus one `.mutuallyExclusive` per category,
    /// alone or inside `.all`.
    private mutating func makeConditions(categories: [Int], hasDependencies: Bool, probability: Double) -> [Condition] {
        var leaves = 0
        var conditions: [Condition] = []
        if rng.chance(probability) {
            for _ in 0..<(rng.chance(0.7) ? 1 : 2) {
                conditions.append(randomCheck(&leaves, hasDependencies: hasDependencies))
            }
        }
        for category in categories {
            if rng.chance(0.3) {
                leaves += 1
                conditions.append(.all([.predicate(leaf: leaves, passes: rng.chance(0.9)), .mutuallyExclusive(category)]))
            } else {
                conditions.append(.mutuallyExclusive(category))
            }
        }
        conditions.shuffle(using: &rng)
        return conditions
    }

    /// A plain operation (not a group), and the children its body makes at run time.
    private mutating func makeLeaf(_ context: Context) -> Int {
        var dependencies = pickDependencies(context, maximum: 3)
        // A `.dependency` condition: on a fresh permission operation, or on an earlier operation
        // already in a queue (top level) or a sibling added with it. Fresh permissions only at the
        // top level: in a group, the library adds the permission to the group after enqueueing
        // the dependent, and if the dependent is cancelled meanwhile and the other children
        // finish, the group has finished and `addChildren` traps (library bug, see the report).
        var dependencyCondition: Condition?
        if rng.chance(0.05) && context.frames.isEmpty {
            let permission = Node(id: scenario.nodes.count, kind: .permission, queue: context.queue,
                                  permissionFor: scenario.nodes.count + 1)
            append(permission, context)
            dependencyCondition = .dependency(permission.id)
        } else if rng.chance(0.04) {
            let siblings = dependencyCandidates(context).filter { id in
                context.frames.isEmpty ? nodeFrames[id].isEmpty : nodeFrames[id].first == context.frames.first
            }
            if let target = siblings.last {
                dependencyCondition = .dependency(target)
                dependencies.removeAll { $0 == target }
            }
        }
        let id = scenario.nodes.count
        var node = Node(id: id, kind: randomKind(), queue: context.queue)
        node.dependencies = dependencies
        node.categories = pickCategories(context, probability: 0.3, dynamic: false)
        node.conditions = makeConditions(categories: node.categories,
                                         hasDependencies: !dependencies.isEmpty || dependencyCondition != nil,
                                         probability: 0.3)
        if let dependencyCondition {
            node.conditions.insert(rng.chance(0.7) ? dependencyCondition : .all([dependencyCondition]), at: 0)
        }
        decorate(&node, context)
        configureControl(&node)
        node.cancelledBeforeAdding = rng.chance(0.04)
        let spawnCount = node.canSpawn && rng.chance(0.08) ? Int.random(in: 1...2, using: &rng) : 0
        node.spawns = (0..<spawnCount).map { id + 1 + $0 }
        append(node, context)
        for _ in 0..<spawnCount {
            makeDynamic(spawner: id, context)
        }
        return id
    }

    /// The random trimmings every operation gets: observers, failures, pauses, priority.
    private mutating func decorate(_ node: inout Node, _ context: Context) {
        let roll = Double.random(in: 0..<1, using: &rng)
        node.observers = roll < 0.6 ? 0 : roll < 0.9 ? 1 : 2
        node.failure = rng.chance(0.1) ? (rng.chance(0.5) ? .cancelWithError : .throwing) : .none
        node.cancelsOwnGroup = !context.frames.isEmpty && rng.chance(0.015)
        node.spinMicroseconds = rng.chance(0.5) ? 0 : Int.random(in: 1...200, using: &rng)
        node.priority = rng.pick(Op.QueuePriority.allCases)
    }

    /// A child that `spawner`'s body creates and adds to its group (or produces in its queue).
    private mutating func makeDynamic(spawner: Int, _ context: Context) {
        let id = scenario.nodes.count
        var node = Node(id: id, kind: randomKind(), queue: context.queue)
        node.spawner = spawner
        node.dependsOnSpawner = rng.chance(0.4)
        node.dependencies = Array(pickDependencies(context, maximum: 1).prefix(1))
        node.categories = pickCategories(context, probability: 0.3, dynamic: true)
        node.conditions = makeConditions(categories: node.categories,
                                         hasDependencies: !node.dependencies.isEmpty || node.dependsOnSpawner,
                                         probability: 0.3)
        decorate(&node, context)
        configureControl(&node)
        node.spawnMode = context.frames.isEmpty || rng.chance(0.5) ? .produce : .addChild
        append(node, context)
    }

    /// A group: its children first (smaller ids), then the group.
    private mutating func makeGroup(_ context: Context) -> Int {
        frameCount += 1
        let key = frameCount
        var plan = Scenario.GroupPlan(
            maxConcurrent: rng.chance(0.3) ? Int.random(in: 1...3, using: &rng) : nil,
            cancelsChildrenOnFailure: rng.chance(0.3),
            allowsNestedGroups: context.depth < 2 && rng.chance(0.5),
            childrenViaInit: rng.chance(0.5))
        if plan.maxConcurrent != nil && plan.allowsNestedGroups && rng.chance(0.5) {
            plan.allowsNestedGroups = false
        }
        let categories = pickCategories(context, probability: 0.4, dynamic: false)
        openFrames.append(Frame(key: key, plan: plan, categories: categories))
        var inner = context
        inner.frames.insert(key, at: 0)
        inner.unlimited = plan.maxConcurrent == nil
        inner.slotSafe = plan.maxConcurrent == nil || !plan.allowsNestedGroups
        inner.depth += 1
        if !categories.isEmpty {
            inner.exclusiveAncestorCategories = (context.exclusiveAncestorCategories ?? []).union(categories)
            inner.nearestGroupCategories = categories
        }
        let childCount = rng.chance(0.05) ? 0 : Int.random(in: 1...6, using: &rng)
        for _ in 0..<childCount {
            if plan.allowsNestedGroups && rng.chance(0.25) {
                _ = makeGroup(inner)
            } else {
                _ = makeLeaf(inner)
            }
        }
        let frame = openFrames.removeLast()
        precondition(frame.key == key)
        let id = scenario.nodes.count
        var node = Node(id: id, kind: .group, queue: context.queue)
        node.groupPlan = frame.plan
        node.dependencies = pickDependencies(context, maximum: 2, excludingFrame: key)
        node.categories = categories
        node.conditions = makeConditions(categories: categories, hasDependencies: !node.dependencies.isEmpty, probability: 0.15)
        node.observers = rng.chance(0.3) ? 1 : 0   // on top of the harness's own observer
        node.cancelledBeforeAdding = rng.chance(0.03)
        if rng.chance(0.06) {
            addTimeout(&node)
        }
        node.priority = rng.pick(Op.QueuePriority.allCases)
        frameGroup[key] = id
        append(node, context)
        return id
    }

    // MARK: Steps

    private mutating func makeSteps() {
        let nodes = scenario.nodes
        let topLevel = nodes.filter { $0.group == nil && !$0.isDynamic && $0.kind != .permission }.map(\.id)
        var index = 0
        var steps: [Scenario.Step] = []
        var created = 0
        func randomCreated(_ rng: inout SplitMix64) -> Int? {
            created > 0 ? Int.random(in: 0..<created, using: &rng) : nil
        }
        while index < topLevel.count {
            let queue = nodes[topLevel[index]].queue!
            var batch: [Int] = []
            let size = Int.random(in: 1...8, using: &rng)
            while index < topLevel.count, batch.count < size, nodes[topLevel[index]].queue == queue {
                batch.append(topLevel[index])
                index += 1
            }
            created = batch.last! + 1
            steps.append(.create(upTo: created))
            steps.append(.add(batch, queue: queue, oneByOne: rng.chance(0.3)))
            if rng.chance(0.25) { steps.append(.pause(microseconds: Int.random(in: 10...500, using: &rng))) }
            if rng.chance(0.12), let target = randomCreated(&rng) {
                steps.append(.cancel(target, withError: rng.chance(0.5)))
            }
            if rng.chance(0.08), let target = randomCreated(&rng) {
                steps.append(.observe(target))
            }
        }
        steps.append(.create(upTo: nodes.count))
        for (queue, plan) in scenario.queues.enumerated() where plan.startsSuspended {
            steps.append(.resume(queue))
        }
        // While things run: pauses, cancellations (groups among them), late observers.
        for _ in 0..<Int.random(in: 3...10, using: &rng) {
            steps.append(.pause(microseconds: Int.random(in: 50...3_000, using: &rng)))
            let groups = nodes.filter(\.isGroup).map(\.id)
            let roll = Double.random(in: 0..<1, using: &rng)
            if roll < 0.3, !groups.isEmpty {
                steps.append(.cancel(rng.pick(groups), withError: rng.chance(0.5)))
            } else if roll < 0.8 {
                steps.append(.cancel(Int.random(in: 0..<nodes.count, using: &rng), withError: rng.chance(0.5)))
            } else {
                steps.append(.observe(Int.random(in: 0..<nodes.count, using: &rng)))
            }
        }
        scenario.steps = steps
    }
}
