import Dispatch
@testable import Operations

/// The live state of one run of a ``CompositionScenario``: makes the operations, runs their
/// bodies and records, under one lock, what every operation, condition and observer did, with
/// logical time stamps. Checks that need the moment (dependencies finished at a start, who holds a
/// category, overlapping callbacks) are made here; the rest after the run, in
/// ``CompositionHarness``.
///
/// It holds no operation: operations hold it (through their closures), and it reaches them through
/// weak references only.
final class CompositionRun: @unchecked Sendable {
    // @unchecked Sendable: every mutable property is in `state`, a locked box; the others are
    // immutable (`OpQueue` and `WeakOpBox` are thread-safe).

    /// A model of a condition, to tell after the run whether it had to pass, and the name of the
    /// condition that decided if not (see `OpCondition+Evaluation.swift`).
    indirect enum ConditionModel: Sendable {
        enum Leaf: Sendable {
            case fixed(Bool)
            case noFailedDependencies
            case noCancelledDependencies
            case exclusive
            case dependency(Int)
            /// An `inject(from:)`: fails if the producer failed or was cancelled, or if it throws.
            case injection(producer: Int, throwing: Bool)
        }
        case leaf(String, Leaf)
        case all(String, [ConditionModel])
        case any(String, [ConditionModel])
        case not(String, ConditionModel)
    }

    struct ObserverLog {
        var late = false
        /// A late observer added while the operation was not finished yet (it must hear the finish).
        var notFinishedAfterAttach = false
        var events: [(event: CompositionObserverEvent, stamp: UInt64)] = []
    }

    struct Record {
        var created = false
        var actualDependencies: [Int] = []
        var conditionModels: [ConditionModel] = []
        var bodyStarts = 0
        var bodyStartStamp: UInt64?
        var bodyEndStamp: UInt64?
        var extraBlockRuns = 0
        var completions = 0
        var completedStamp: UInt64?
        var finalError: String?
        var finalConditionFailure: String?
        var finalIsCycleError = false
        var finalCancelled = false
        var cancelCalls = 0
        var addedToCancelledGroup = false
        var produced: [String] = []
        var leafEvaluations: [String: Int] = [:]
        var observerLogs: [ObserverLog] = []
        var activeCallbacks = 0
        /// A group: how often `execute()` ran, whether it was cancelled then, what it held.
        var executions = 0
        var executedCancelled = false
        var heldCategories: [Int] = []
        var groupEndStamp: UInt64?
        /// Retries, timeouts, delays, injections (see `CompositionRun+Control.swift`).
        var control = ControlRecord()
    }

    struct State {
        var clock: UInt64 = 0
        var records: [Record]
        /// Per category: the operations executing with it now.
        var executing: [Int: Set<Int>] = [:]
        var violations: [String] = []
        var known: [(CompositionKnownIssue, String)] = []
        /// How often an operation entered a category that an ancestor group held (nested holds).
        var nestedHolds = 0
        /// Per queue (`-1 - index`) or group (its id): the operations executing in it now.
        var running: [Int: Set<Int>] = [:]
        /// How often a queue or group of limited width ran as many operations as it may.
        var widthReached = 0
        /// Every attempt a `RetryOp` made, by name, to check that it is released.
        var attemptBoxes: [(String, WeakOpBox)] = []

        mutating func stamp() -> UInt64 {
            clock += 1
            return clock
        }
    }

    let scenario: CompositionScenario
    let token: String
    let boxes: [WeakOpBox]
    let queues: [OpQueue]
    let categoryNames: [String]
    let state: LockedBox<State>
    /// Entered when an operation is created (permissions excepted), left by its completion block.
    let pending = DispatchGroup()

    init(scenario: CompositionScenario) {
        self.scenario = scenario
        let token = uniqueToken("composition")
        self.token = token
        boxes = scenario.nodes.map { _ in WeakOpBox() }
        categoryNames = (0..<scenario.categoryCount).map { "\(token).category\($0)" }
        state = LockedBox(State(records: Array(repeating: Record(), count: scenario.nodes.count)))
        queues = scenario.queues.enumerated().map { index, plan in
            StressReporting.queue(named: "\(token).q\(index)", width: plan.width, startsSuspended: plan.startsSuspended)
        }
    }

    func name(of id: Int) -> String { "\(token).n\(id)" }

    func violation(_ text: String) {
        state.withLockedValue { $0.violations.append(text) }
    }

    // MARK: Making operations

    /// Creates the operation of `id` with its conditions, dependencies, observers and completion
    /// block; a group gets its static children (created before it). Dependencies are reached
    /// through the weak references: the driver holds every static operation until the end, and a
    /// spawner is executing while it makes its children.
    func makeOperation(_ id: Int) -> Op {
        let node = scenario.nodes[id]
        let operation: Op
        switch node.kind {
        case .block(let plain, let extraBlock):
            let block: @Sendable () -> Void = { [self] in blockBody(id) }
            let blockOp = plain ? BlockOp(block: block) : CompositionBlockOp(run: self, node: id, block: block)
            if extraBlock {
                blockOp.addExecutionBlock { [self] in
                    state.withLockedValue { $0.records[id].extraBlockRuns += 1 }
                }
            }
            operation = blockOp
        case .sync:
            operation = CompositionSyncOp(run: self, node: id)
        case .asyncBody:
            operation = CompositionAsyncOp(run: self, node: id, callback: false)
        case .asyncCallback:
            operation = CompositionAsyncOp(run: self, node: id, callback: true)
        case .producer(let async):
            operation = makeProducer(id, async: async)
        case .mapped(let async):
            operation = makeMapped(id, async: async)
        case .retry:
            operation = makeRetry(id)
        case .delay:
            operation = makeDelay(id)
        case .permission:
            operation = BlockOp { [self] in
                state.withLockedValue { state in
                    state.records[id].bodyStarts += 1
                    state.records[id].bodyStartStamp = state.stamp()
                }
            }
        case .group:
            let plan = node.groupPlan!
            let children = plan.children.compactMap { boxes[$0].operation }
            if children.count != plan.children.count {
                violation("n\(id): a static child was released before its group was created")
            }
            if plan.childrenViaInit {
                operation = CompositionGroupOp(run: self, node: id, operations: children)
            } else {
                let group = CompositionGroupOp(run: self, node: id, operations: [])
                if children.count > 1 && id % 2 == 0 {
                    group.addChildren(children)
                } else {
                    for child in children { group.addChild(child) }
                }
                operation = group
            }
            if let width = plan.maxConcurrent {
                (operation as! GroupOp).maxConcurrentOperationCount = width
            }
            (operation as! GroupOp).cancelsChildrenOnFailure = plan.cancelsChildrenOnFailure
        }
        operation.name = name(of: id)
        operation.queuePriority = node.priority
        // A timeout is set before or after the rest, as the id says.
        if id % 2 == 0 { operation.timeout = node.timeout }
        var models: [ConditionModel] = []
        if node.injectionsFirst {
            models += addInjections(id, to: operation)
        }
        for condition in node.conditions {
            let (built, model) = build(condition, node: id)
            operation.addCondition(built)
            models.append(model)
        }
        if !node.injectionsFirst {
            models += addInjections(id, to: operation)
        }
        for dependency in node.dependencies + (node.dependsOnSpawner ? [node.spawner!] : []) {
            guard let target = boxes[dependency].operation else {
                violation("n\(id): its dependency n\(dependency) was released before it was created")
                continue
            }
            operation.addDependency(target)
        }
        let observerCount = node.observers + (node.hasOwnObserver ? 1 : 0)
        state.withLockedValue { state in
            state.records[id].created = true
            state.records[id].control.createdAt = .now
            state.records[id].actualDependencies = scenario.allDependencies(of: id)
            state.records[id].conditionModels = models
            state.records[id].observerLogs = Array(repeating: ObserverLog(), count: observerCount)
        }
        for slot in 0..<observerCount {
            operation.addObserver(CompositionObserver(run: self, node: id, slot: slot))
        }
        if id % 2 == 1 { operation.timeout = node.timeout }
        operation.completionBlock = { [self] in completed(id) }
        boxes[id].set(operation)
        if node.kind != .permission {
            pending.enter()
        }
        return operation
    }

    /// Builds a condition and its model.
    private func build(_ condition: CompositionScenario.Condition, node: Int) -> (OpCondition, ConditionModel) {
        switch condition {
        case .predicate(let leaf, let passes):
            let name = "p\(node).\(leaf)"
            let built = OpCondition.predicate(name) { [self] operation in
                leafEvaluated(node, name, operation)
                return passes
            }
            return (built, .leaf(name, .fixed(passes)))
        case .evaluate(let leaf, let passes, let throwing, let microseconds):
            let name = "e\(node).\(leaf)"
            let built = OpCondition.evaluate(name) { [self] operation in
                leafEvaluated(node, name, operation)
                if microseconds > 0 {
                    try? await Task.sleep(nanoseconds: UInt64(microseconds) * 1_000)
                } else {
                    await Task.yield()
                }
                if throwing { throw CompositionError(node: node, reason: "condition \(name)") }
                return passes
            }
            return (built, .leaf(name, .fixed(passes && !throwing)))
        case .noFailedDependencies:
            return (.noFailedDependencies, .leaf(OpCondition.noFailedDependencies.name, .noFailedDependencies))
        case .noCancelledDependencies:
            return (.noCancelledDependencies, .leaf(OpCondition.noCancelledDependencies.name, .noCancelledDependencies))
        case .mutuallyExclusive(let category):
            let built = OpCondition.mutuallyExclusive(categoryNames[category])
            return (built, .leaf(built.name, .exclusive))
        case .all(let conditions):
            let parts = conditions.map { build($0, node: node) }
            let built = OpCondition.all(parts.map(\.0))
            return (built, .all(built.name, parts.map(\.1)))
        case .any(let conditions):
            let parts = conditions.map { build($0, node: node) }
            let built = OpCondition.any(parts.map(\.0))
            return (built, .any(built.name, parts.map(\.1)))
        case .not(let inner):
            let part = build(inner, node: node)
            let built = OpCondition.not(part.0)
            return (built, .not(built.name, part.1))
        case .dependency(let target):
            let built = OpCondition.dependency(boxes[target].operation!)
            return (built, .leaf(built.name, .dependency(target)))
        }
    }

    /// A condition's check runs: it is given its operation, whose dependencies have all finished.
    private func leafEvaluated(_ id: Int, _ leaf: String, _ operation: Op) {
        if operation.name != name(of: id) {
            violation("n\(id): condition \(leaf) was evaluated for \(operation), not for its own operation")
        }
        let unfinished = operation.dependencies.filter { !$0.isFinished }
        if !unfinished.isEmpty {
            violation("n\(id): condition \(leaf) was evaluated before its dependencies \(unfinished.map(\.description)) finished")
        }
        state.withLockedValue { state in
            state.records[id].leafEvaluations[leaf, default: 0] += 1
            if state.records[id].leafEvaluations[leaf]! > 1 {
                state.violations.append("n\(id): condition \(leaf) was evaluated \(state.records[id].leafEvaluations[leaf]!) times")
            }
        }
    }

    // MARK: Bodies

    func syncBody(_ id: Int, _ operation: Op) {
        bodyBegin(id, operation)
        if scenario.nodes[id].waitsForCancellation { waitForCancellation(id, operation) }
        work(id, operation)
        if scenario.nodes[id].failure != .none {
            operation.cancel(with: CompositionError(node: id, reason: "body"))
        }
        bodyEnd(id)
    }

    func blockBody(_ id: Int) {
        guard let operation = Op.current, operation.name == name(of: id) else {
            violation("n\(id): Op.current in its block is \(Op.current.map(\.description) ?? "nil")")
            return
        }
        syncBody(id, operation)
    }

    func asyncBody(_ id: Int, _ operation: CompositionAsyncOp) async throws {
        bodyBegin(id, operation)
        let node = scenario.nodes[id]
        if node.waitsForCancellation {
            await waitForCancellation(id)
        } else if node.spinMicroseconds > 0, id % 3 == 0 {
            try? await Task.sleep(nanoseconds: UInt64(node.spinMicroseconds) * 1_000)
        } else {
            await Task.yield()
        }
        work(id, operation)
        bodyEnd(id)
        switch node.failure {
        case .none: return
        case .cancelWithError: operation.cancel(with: CompositionError(node: id, reason: "body"))
        case .throwing: throw CompositionError(node: id, reason: "body")
        }
    }

    func callbackExecute(_ id: Int, _ operation: CompositionAsyncOp) {
        bodyBegin(id, operation)
        spawn(id, operation)
        DispatchQueue.global().async { [self] in
            let node = scenario.nodes[id]
            StressRun.pause(.spin(microseconds: node.spinMicroseconds))
            if node.cancelsOwnGroup { operation.group?.cancel() }
            bodyEnd(id)
            switch node.failure {
            case .none: operation.finish()
            case .cancelWithError:
                operation.cancel(with: CompositionError(node: id, reason: "body"))
                operation.finish()
            case .throwing: operation.finish(throwing: CompositionError(node: id, reason: "body"))
            }
        }
    }

    /// The work of a synchronous body or an `async` one: a pause, the children it makes, and
    /// perhaps a cancellation of its own group.
    func work(_ id: Int, _ operation: Op) {
        let node = scenario.nodes[id]
        StressRun.pause(.spin(microseconds: node.spinMicroseconds))
        spawn(id, operation)
        if node.cancelsOwnGroup { Op.current?.group?.cancel() }
    }

    /// Makes the children of the plan and adds them to the group (or queue) of the running
    /// `spawner`, through `Op.current`.
    private func spawn(_ spawner: Int, _ operation: Op) {
        for id in scenario.nodes[spawner].spawns {
            let child = makeOperation(id)
            guard let current = Op.current, current === operation else {
                violation("n\(spawner): Op.current is \(Op.current.map(\.description) ?? "nil") while it spawns")
                pending.leave()
                continue
            }
            let group = current.group
            let cancelledBefore = group?.isCancelled ?? false
            state.withLockedValue { $0.records[id].addedToCancelledGroup = cancelledBefore }
            if group != nil, scenario.nodes[id].spawnMode == .addChild {
                current.group?.addChild(child)
            } else {
                current.produce(child)
                state.withLockedValue { $0.records[spawner].produced.append(name(of: id)) }
            }
        }
    }

    /// A body starts: checks `Op.current`, the dependencies, the categories it must hold, its
    /// executing ancestors and its observers, and enters its categories.
    func bodyBegin(_ id: Int, _ operation: Op) {
        if Op.current !== operation {
            violation("n\(id): Op.current in its body is \(Op.current.map(\.description) ?? "nil")")
        }
        let unfinished = operation.dependencies.filter { !$0.isFinished }
        if !unfinished.isEmpty && !operation.isCancelled {
            violation("n\(id): started before its dependencies \(unfinished.map(\.description)) finished")
        }
        let categories = scenario.nodes[id].categories
        let notHeld = categories.filter { category in
            !Exclusivity.holders(of: categoryNames[category]).contains { $0 === operation }
        }
        if !notHeld.isEmpty {
            violation("n\(id): runs without holding its categories \(notHeld.map { categoryNames[$0] })")
        }
        checkAncestorsExecuting(id)
        state.withLockedValue { state in
            let stamp = state.stamp()
            state.records[id].bodyStarts += 1
            if state.records[id].bodyStarts > 1 {
                state.violations.append("n\(id): its body ran \(state.records[id].bodyStarts) times")
            }
            state.records[id].bodyStartStamp = stamp
            for (slot, log) in state.records[id].observerLogs.enumerated() where !log.late {
                if !log.events.contains(where: { $0.event == .willExecute }) {
                    state.violations.append("n\(id): its body started before observer \(slot) heard willExecute")
                }
            }
            checkInjections(id, &state)
            enter(id, categories, &state)
            enterSlot(id, &state)
        }
    }

    func bodyEnd(_ id: Int) {
        state.withLockedValue { state in
            state.records[id].bodyEndStamp = state.stamp()
            exit(id, scenario.nodes[id].categories, &state)
            exitSlot(id, &state)
        }
    }

    /// A child runs only while every group it is nested in is executing.
    func checkAncestorsExecuting(_ id: Int) {
        for ancestor in scenario.ancestors(of: id) {
            guard let group = boxes[ancestor].operation else {
                violation("n\(id) runs, but its group n\(ancestor) was released")
                continue
            }
            if !group.isExecuting {
                violation("n\(id) runs while its group n\(ancestor) is not executing (finished: \(group.isFinished))")
            }
        }
    }

    /// A group starts executing: it holds what it asked for unless it was cancelled first.
    func groupExecute(_ id: Int, _ group: GroupOp) {
        let cancelled = group.isCancelled
        if Op.current !== group {
            violation("n\(id): Op.current in the group's execute() is \(Op.current.map(\.description) ?? "nil")")
        }
        if !cancelled {
            let unfinished = group.dependencies.filter { !$0.isFinished }
            if !unfinished.isEmpty {
                violation("n\(id): the group started before its dependencies \(unfinished.map(\.description)) finished")
            }
        }
        let requested = scenario.requestedCategories(of: id)
        // A cancelled group runs only to let its cancelled children finish: it does no exclusive
        // work, and whatever it was granted on its way in (a request still waiting when it was
        // cancelled) is given back at once, so it counts as holding nothing.
        let held = cancelled ? [] : requested.filter { category in
            Exclusivity.holders(of: categoryNames[category]).contains { $0 === group }
        }
        if !cancelled && held != requested {
            violation("n\(id): the group runs holding \(held.map { categoryNames[$0] }) of the categories it asks for, \(requested.map { categoryNames[$0] })")
        }
        checkAncestorsExecuting(id)
        state.withLockedValue { state in
            state.records[id].executions += 1
            if state.records[id].executions > 1 {
                state.violations.append("n\(id): the group executed \(state.records[id].executions) times")
            }
            state.records[id].bodyStartStamp = state.stamp()
            state.records[id].executedCancelled = cancelled
            state.records[id].heldCategories = held
            enter(id, held, &state)
            enterSlot(id, &state)
        }
    }

    /// The group's own observer hears willFinish: every child is finished; its categories are
    /// given back right after.
    private func groupWillFinish(_ id: Int, _ group: Op) {
        let children = (group as? GroupOp)?.children ?? []
        let unfinished = children.filter { !$0.isFinished }
        if !unfinished.isEmpty {
            violation("n\(id): the group finishes while its children \(unfinished.map(\.description)) are not finished")
        }
        state.withLockedValue { state in
            state.records[id].groupEndStamp = state.stamp()
            exit(id, state.records[id].heldCategories, &state)
            exitSlot(id, &state)
        }
    }

    // MARK: Exclusivity

    /// Enters `categories`: every operation executing with one of them must be an ancestor or a
    /// descendant of `id`.
    func enter(_ id: Int, _ categories: [Int], _ state: inout State) {
        for category in categories {
            let others = state.executing[category, default: []]
            for other in others {
                if scenario.isAncestor(other, of: id) {
                    state.nestedHolds += 1
                } else if !scenario.isAncestor(id, of: other) {
                    state.violations.append("n\(id) and n\(other) execute at the same time, both with \(categoryNames[category])")
                }
            }
            state.executing[category, default: []].insert(id)
        }
    }

    /// An operation starts executing in its queue or group: never more than its width at once.
    func enterSlot(_ id: Int, _ state: inout State) {
        let node = scenario.nodes[id]
        let (key, width, place): (Int, Int?, String) = if let group = node.group {
            (group, scenario.nodes[group].groupPlan!.maxConcurrent, "group n\(group)")
        } else {
            (-1 - node.queue!, scenario.queues[node.queue!].width > 0 ? scenario.queues[node.queue!].width : nil, "q\(node.queue!)")
        }
        let others = state.running[key, default: []]
        state.running[key, default: []].insert(id)
        if let width {
            if others.count >= width {
                state.violations.append("n\(id) starts while \(others.count) operations execute in \(place), of width \(width): \(others.sorted().map { "n\($0)" })")
            } else if others.count + 1 == width {
                state.widthReached += 1
            }
        }
    }

    func exitSlot(_ id: Int, _ state: inout State) {
        let node = scenario.nodes[id]
        state.running[node.group ?? (-1 - node.queue!)]?.remove(id)
    }

    func exit(_ id: Int, _ categories: [Int], _ state: inout State) {
        for category in categories {
            state.executing[category]?.remove(id)
        }
    }

    // MARK: Cancellation, completion

    func noteCancelCall(_ id: Int) {
        state.withLockedValue { $0.records[id].cancelCalls += 1 }
    }

    private func completed(_ id: Int) {
        let operation = boxes[id].operation
        if operation == nil {
            violation("n\(id): released while its completion block runs")
        }
        let finished = operation?.isFinished ?? false
        let error = operation?.error
        let cancelled = operation?.isCancelled ?? false
        state.withLockedValue { state in
            state.records[id].completions += 1
            if state.records[id].completions > 1 {
                state.violations.append("n\(id): its completion block ran \(state.records[id].completions) times")
            }
            if !finished {
                state.violations.append("n\(id): its completion block runs before it reads as finished")
            }
            state.records[id].completedStamp = state.stamp()
            state.records[id].finalError = error.map { "\($0)" }
            state.records[id].finalConditionFailure = conditionFailureName(of: error, id)
            state.records[id].finalIsCycleError = error is DependencyCycleError
            state.records[id].finalCancelled = cancelled
        }
        controlCompleted(id, operation, error: error)
        if scenario.nodes[id].kind != .permission {
            pending.leave()
        }
    }

    // MARK: Observers

    /// Adds an observer to an operation that may be running already.
    func attachLateObserver(_ id: Int) {
        guard let operation = boxes[id].operation else { return }
        let slot = state.withLockedValue { state in
            var log = ObserverLog()
            log.late = true
            state.records[id].observerLogs.append(log)
            return state.records[id].observerLogs.count - 1
        }
        operation.addObserver(CompositionObserver(run: self, node: id, slot: slot))
        let notFinished = !operation.isFinished
        state.withLockedValue { $0.records[id].observerLogs[slot].notFinishedAfterAttach = notFinished }
    }

    func observed(_ id: Int, _ slot: Int, _ event: CompositionObserverEvent, _ operation: Op) {
        state.withLockedValue { state in
            if state.records[id].activeCallbacks > 0 {
                state.violations.append("n\(id): observer callback \(event.label) (observer \(slot)) overlaps another callback of the same operation")
            }
            state.records[id].activeCallbacks += 1
            let stamp = state.stamp()
            state.records[id].observerLogs[slot].events.append((event, stamp))
        }
        if operation.name != name(of: id) {
            violation("n\(id): observer \(slot) got \(event.label) for \(operation)")
        }
        switch event {
        case .willFinish:
            let ran = state.withLockedValue { $0.records[id].bodyStarts > 0 || $0.records[id].executions > 0 }
            if ran && operation.isFinished {
                violation("n\(id): observer \(slot) heard willFinish after the operation read as finished")
            }
            if slot == 0 && scenario.nodes[id].isGroup {
                groupWillFinish(id, operation)
            } else if slot == 0 && scenario.nodes[id].hasOwnObserver {
                ownWillFinish(id)
            }
        case .willExecute where slot == 0 && scenario.nodes[id].hasOwnObserver && !scenario.nodes[id].isGroup:
            ownWillExecute(id, operation)
        case .didFinish:
            if !operation.isFinished {
                violation("n\(id): observer \(slot) heard didFinish before the operation read as finished")
            }
        case .attach, .willExecute, .didCancel, .didProduce:
            break
        }
        // Widen the window in which an overlapping callback would be seen.
        if id % 5 == 0 { StressRun.pause(.spin(microseconds: 20)) }
        state.withLockedValue { $0.records[id].activeCallbacks -= 1 }
    }
}
