/// A small, obviously correct model of what the library promises, written for the model-based
/// test from the documentation (the DocC articles and the doc comments of `Op`, `OpQueue`,
/// `GroupOp`, `OpCondition` and `OpObserver`), not from the implementation.
///
/// It plays a ``ModelSequence`` step by step. Each step is first checked: a step that would be a
/// programmer error (a trap), that the documentation leaves open (an outcome that depends on
/// timing), or that could deadlock by design (documented as the caller's mistake) is refused and
/// dropped (``normalized(_:defects:)``), so that every sequence the test runs has one predictable
/// outcome.
///
/// The rules it plays, each from the documentation:
///
/// - An operation is ready when every dependency has finished, or when it is cancelled (a
///   cancelled operation ignores its dependencies and finishes without running its body when it
///   is started; a group executes anyway, to finish its children, which it cancels).
/// - Conditions are evaluated in order once the operation is ready in its queue (not while a
///   dependency holds it back), over the dependencies it has then; the first failure cancels it
///   with a `ConditionFailedError` naming the condition. A dependency added once they passed holds
///   the operation back again, and they are evaluated again when it is ready (issue 22, 15).
/// - `.dependency(x)` makes `x` a dependency that joins the operation's queue or group when the
///   operation does (unless it is in one already: a group's child stays in its group); it passes
///   when `x` finished without an error and without being cancelled.
/// - A group's child runs once the group executes; the group finishes after its last child, with
///   its own error, or a `GroupError` counting its failed children. An operation that a child adds
///   to `OpQueue.current`, produces, or adds to its group is a child of the group (issue 22, 13).
/// - A body that runs does what it was given to do (cancel a dependent, add an operation, wait for
///   a dependency); an `AsyncOp` that throws fails with that error; `cancel(with:)` keeps the first
///   error.
/// - Observers: `didAttach` first; `willExecute` if the body runs; `didCancel` if it is cancelled
///   after the observer was attached; `didProduce` for what the body produces; `willFinish`, then
///   `didFinish` last. Observed changes: `isExecuting` false→true→false if it ran, `isFinished`
///   false→true, `isCancelled` false→true if cancelled after the observer was registered, each once.
/// - On a queue of width 1, among the ready operations the highest priority starts first, and
///   equal priorities in the order they became ready (operations made ready by one step in either
///   order); changing the priority of a listed operation moves it to the end of its new priority's
///   list (``ModelOrderCheck``).
///
/// A staged sequence runs with every queue suspended; the model then plays each run phase as a
/// fixed point over these rules. The outcome of each operation (ran or not, cancelled, its error,
/// the phase it finished in, its observers' callbacks) does not depend on the order in which the
/// fixed point visits them, because the refused steps are exactly those whose outcome would.
/// An interleaved sequence is only checked for legality here; ``interleavedFinishers(added:cancelledByBodies:bindingOnly:)``
/// bounds what must and what may finish.
struct ReferenceModel: Sendable {
    /// The finished operation that ``ModelCommand/observeDependenciesFromHandler(_:)`` adds.
    static let helper = -1
    /// The most operations a sequence makes.
    static let maximumOperations = 48
    /// The most ``ModelCommand/runUntilQuiet`` phases.
    static let maximumQuietPhases = 2

    let mode: ModelSequence.Mode
    var queues: [QueueState]
    var ops: [Int: OpState] = [:]
    /// The run phase that comes next; a step made now belongs to the build phase before it.
    var phase = 0
    /// Stamps ready-list entries.
    var sequence = 0
    /// Dependencies that must stay (a body cancels or waits for the operation through them, or a
    /// `.dependency` condition names it): removing one is refused.
    var pinned: Set<[Int]> = []
    /// Staged sequences: the start-order snapshots of the phases played so far.
    var orderSnapshots: [ModelOrderSnapshot] = []
    /// Staged sequences: the number of phases once ``finish()`` has played them.
    var phaseCount = 0

    init(mode: ModelSequence.Mode, queueWidths: [Int]) {
        self.mode = mode
        queues = queueWidths.map { QueueState(width: $0) }
    }

    /// The legal steps of `sequence` (each one checked against the steps kept before it), played;
    /// without the steps that make the shape of a defect switched on in `defects`.
    static func normalized(_ sequence: ModelSequence, defects: ModelKnownDefects = .none) -> (sequence: ModelSequence, model: ReferenceModel) {
        var model = ReferenceModel(mode: sequence.mode, queueWidths: sequence.queueWidths)
        var filter = ModelDefectFilter(defects)
        var kept: [ModelCommand] = []
        for command in sequence.commands {
            var next = model
            guard next.apply(command), filter.allows(command, on: model, giving: next) else { continue }
            model = next
            filter.played(command, giving: model)
            kept.append(command)
        }
        model.finish()
        var result = sequence
        result.commands = kept
        return (result, model)
    }

    // MARK: Facts

    func isFinished(_ id: Int) -> Bool {
        id == Self.helper || ops[id]?.life == .finished
    }

    func isReady(_ id: Int) -> Bool {
        guard let op = ops[id] else { return false }
        return op.cancelled || op.deps.allSatisfy(isFinished)
    }

    func errorOf(_ id: Int) -> ModelErrorKind {
        id == Self.helper ? .none : ops[id]?.error ?? .none
    }

    func isCancelled(_ id: Int) -> Bool {
        id != Self.helper && ops[id]?.cancelled == true
    }

    /// Whether the operation is in a queue, or a child of a group that is executing: it can be
    /// scheduled once ready.
    func isSchedulable(_ id: Int) -> Bool {
        guard let op = ops[id], op.isPending else { return false }
        switch op.home {
        case .queue: return true
        case .child(let group): return ops[group]?.life == .executing
        case .free, .reserved, .heldByCondition: return false
        }
    }

    /// The queue the operation ends up in, directly or through the groups it is a child of.
    func rootQueue(of id: Int) -> Int? {
        var current = id
        while let op = ops[current] {
            switch op.home {
            case .queue(let queue): return queue
            case .child(let group): current = group
            case .reserved(let by), .heldByCondition(let by): current = by
            case .free: return nil
            }
        }
        return nil
    }

    /// The `.dependency` operations that `id` still holds, and those they hold in turn: they join
    /// where it goes, when it goes.
    func heldByCondition(of id: Int) -> [Int] {
        var held: [Int] = []
        var holders = [id]
        while let holder = holders.popLast() {
            for condition in ops[holder]!.conditions {
                guard case .dependency(let other) = condition, ops[other]?.home == .heldByCondition(of: holder),
                      !held.contains(other) else { continue }
                held.append(other)
                holders.append(other)
            }
        }
        return held
    }

    /// Whether the operation is in no queue or group for sure: free, or held by a `.dependency`
    /// condition of an operation that is free for sure.
    func isCertainlyHomeless(_ id: Int) -> Bool {
        var current = id
        var seen: Set<Int> = []
        while seen.insert(current).inserted, let op = ops[current] {
            switch op.home {
            case .free: return true
            case .heldByCondition(let owner): current = owner
            case .queue, .child, .reserved: return false
            }
        }
        return false
    }

    /// Whether the operation is, or will be when it joins, a group's child.
    func becomesChild(_ id: Int) -> Bool {
        futureGroup(of: id) != nil
    }

    /// The group the operation is a child of, or will be once it joins.
    func futureGroup(of id: Int) -> Int? {
        var current = id
        var seen: Set<Int> = []
        while seen.insert(current).inserted, let op = ops[current] {
            switch op.home {
            case .child(let group): return group
            case .reserved(let by), .heldByCondition(let by): current = by
            case .free, .queue: return nil
            }
        }
        return nil
    }

    /// The dependents of an operation.
    func dependents(of id: Int) -> [Int] {
        ops.keys.sorted().filter { ops[$0]!.deps.contains(id) }
    }

    // MARK: Cycles

    /// What an operation waits for before it can finish: its dependencies, a group's children,
    /// and what the group (or the operation whose body adds it) waits for before it starts.
    private func waitsFor(_ id: Int) -> [Int] {
        guard let op = ops[id] else { return [] }
        var edges = op.deps.filter { $0 != Self.helper }
        if op.kind.isGroup {
            // Its children, and the operations that will be its children once the operations
            // holding them (by a body or a `.dependency` condition) join it.
            edges += ops.keys.filter { other in other != id && futureGroup(of: other) == id }
        }
        var starter: Int?
        switch op.home {
        case .child(let group): starter = group
        case .reserved(let by): starter = by
        case .free, .queue, .heldByCondition: starter = nil
        }
        var seen: Set<Int> = []
        while let current = starter, seen.insert(current).inserted, let owner = ops[current] {
            edges += owner.deps.filter { $0 != Self.helper }
            switch owner.home {
            case .child(let group): starter = group
            case .reserved(let by): starter = by
            case .free, .queue, .heldByCondition: starter = nil
            }
        }
        return edges
    }

    /// Whether anything waits for itself, directly or through others.
    func hasCycle() -> Bool {
        var state: [Int: Bool] = [:]   // false: on the path; true: done
        func visit(_ id: Int) -> Bool {
            if let done = state[id] { return !done }
            state[id] = false
            for next in waitsFor(id) where visit(next) { return true }
            state[id] = true
            return false
        }
        return ops.keys.sorted().contains(where: visit)
    }

    /// Whether `change` leaves the graph without a cycle (the model is unchanged either way).
    func staysAcyclic(_ change: (inout ReferenceModel) -> Void) -> Bool {
        var copy = self
        change(&copy)
        return !copy.hasCycle()
    }

    // MARK: Ready lists

    mutating func nextSequence() -> Int {
        sequence += 1
        return sequence
    }

    /// Lists the operation as ready (in its queue's ready list if it is in a queue).
    mutating func schedule(_ id: Int, sequence stamp: Int? = nil) {
        ops[id]!.scheduled = true
        if let queue = ops[id]!.queue {
            let stamp = stamp ?? nextSequence()
            queues[queue].ready.append(QueueState.Entry(op: id, priority: ops[id]!.priority, sequence: stamp))
            if ops[id]!.isExclusive && !ops[id]!.cancelled {
                // Listed when its categories are granted: the model cannot tell when.
                queues[queue].orderUnknown = true
            }
        }
    }

    mutating func unschedule(_ id: Int) {
        ops[id]!.scheduled = false
        if let queue = ops[id]!.queue {
            queues[queue].ready.removeAll { $0.op == id }
        }
    }

    /// An operation that is schedulable, not scheduled and ready passes its conditions (if they
    /// are closed and it is not cancelled) and is listed. Returns whether it was listed.
    @discardableResult
    mutating func scheduleIfReady(_ id: Int, sequence stamp: Int? = nil) -> Bool {
        guard isSchedulable(id), !ops[id]!.scheduled, isReady(id) else { return false }
        if !ops[id]!.cancelled && ops[id]!.gate == .closed {
            evaluateConditions(id)
        }
        schedule(id, sequence: stamp)
        return true
    }

    /// Lists, with one stamp, every operation among `candidates` that became ready.
    mutating func scheduleTogether(_ candidates: [Int]) {
        let stamp = nextSequence()
        for id in candidates {
            scheduleIfReady(id, sequence: stamp)
        }
    }

    // MARK: Conditions

    /// Evaluates the conditions in order over the dependencies as they are now (all finished);
    /// the first failure cancels the operation with a `ConditionFailedError`.
    mutating func evaluateConditions(_ id: Int) {
        let op = ops[id]!
        for condition in op.conditions {
            let passes: Bool
            switch condition {
            case .predicate(let value), .evaluate(let value): passes = value
            case .evaluateThrows: passes = false
            case .noFailedDependencies: passes = op.deps.allSatisfy { errorOf($0).isNone }
            case .noCancelledDependencies: passes = op.deps.allSatisfy { !isCancelled($0) }
            case .exclusive: passes = true
            case .dependency(let other):
                passes = isFinished(other) && !isCancelled(other) && errorOf(other).isNone
            case .not(let value): passes = !value
            case .any(let first, let second): passes = first || second
            case .cancelsItsOperation, .cancelsItsOperationAndWaits:
                // It cancels its operation while it is checked, then passes: the operation is
                // cancelled without an error (it is the last condition: see `apply`).
                if condition == .cancelsItsOperationAndWaits { ops[id]!.conditionWaitsForCancellation = true }
                cancel(id)
                passes = true
            }
            if !passes {
                if ops[id]!.error.isNone { ops[id]!.error = .conditionFailed(condition.failureName) }
                cancel(id, cascades: false)
                return
            }
        }
        ops[id]!.gate = .passed
    }

    // MARK: Cancelling

    /// `cancel()` (or `cancel(with:)`): a pending operation becomes ready and is listed; a
    /// group cancels its children (a group cancelled otherwise, by a failed condition, cancels
    /// them when it starts); a finished operation does not change.
    mutating func cancel(_ id: Int, withError: Bool = false, byBodyOf actor: Int? = nil, cascades: Bool = true) {
        guard var op = ops[id], op.life != .finished else { return }
        if op.cancelled {
            if withError && op.error.isNone { ops[id]!.error = .cancelledWithError }
            return
        }
        op.cancelled = true
        if withError && op.error.isNone { op.error = .cancelledWithError }
        op.observerEvents?.append(.didCancel)
        if op.isObserved { op.cancelledAfterObserving = true }
        // Before it could start: in no queue or group, and not promised to a body that may
        // have added it already (directly or through the operation holding it).
        op.cancelledBeforeHome = !op.ran && isCertainlyHomeless(id)
        op.cancelledByBodyOf = actor
        ops[id] = op
        if op.kind.isGroup && cascades {
            for child in op.children where ops[child]!.life != .finished {
                cancel(child)
            }
        }
        if mode == .staged, isSchedulable(id), !ops[id]!.scheduled {
            schedule(id)
        }
    }

    // MARK: Dependencies

    /// A change of the dependency list: the observer registered by
    /// ``ModelCommand/observeDependenciesFromHandler(_:)`` adds the helper at its first call.
    mutating func dependenciesChanged(_ id: Int) {
        guard ops[id]!.dependencyVersions != nil else { return }
        ops[id]!.dependencyVersions!.append(ops[id]!.deps)
        if ops[id]!.helperPending {
            ops[id]!.helperPending = false
            ops[id]!.deps.append(Self.helper)
            ops[id]!.dependencyVersions!.append(ops[id]!.deps)
            ops[id]!.helperVersion = ops[id]!.dependencyVersions!.count - 1
        }
    }

    /// The operation got a home: in an interleaved sequence, its dependencies from now on bind.
    mutating func gotHome(_ id: Int, _ home: OpState.Home) {
        if case .heldByCondition = ops[id]!.home { ops[id]!.joinedHeld = true }
        ops[id]!.home = home
        if ops[id]!.depsAtHome == nil { ops[id]!.depsAtHome = ops[id]!.deps }
        if case .queue(let queue) = home { queues[queue].members.append(id) }
        if case .child(let group) = home {
            ops[group]!.children.append(id)
            if ops[group]!.cancelled && ops[group]!.life != .finished {
                cancel(id)
            }
        }
    }
}
