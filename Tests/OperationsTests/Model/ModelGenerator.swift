/// Makes a random ``ModelSequence`` from a seed: the same seed always makes the same sequence.
///
/// Each sequence picks a profile, which weights the steps towards one area (many dependents
/// and re-added dependencies, late dependencies, priorities, groups, observers, cancellation,
/// exclusivity) or
/// mixes them all. Steps are drawn against a ``ReferenceModel`` of the sequence so far, so that
/// most are legal; the model drops the rest. ``ModelDefectFilter`` keeps out the shapes of the
/// defects that ``ModelKnownDefects`` switches on (still being fixed elsewhere).
struct ModelGenerator {
    /// The areas a sequence concentrates on.
    enum Profile: CaseIterable {
        case mixed, fans, lateDependencies, priorities, groups, observers, cancellation, exclusivity
    }

    /// The kinds of step, each drawn with a weight that depends on the profile.
    private enum Move: CaseIterable {
        case make, enqueue, enqueueBatch, addChild, addDependency, lateDependency, removeDependency, reAdd
        case fanReAdd, setPriority, priorityStorm, cancel, cancelWithError, addCondition, conditionOnChild
        case observe, observeDependenciesFromHandler, observeOperationsFromHandler, onRun, onCallback
        case startByHand, runUntilQuiet, keepSuspended, suspendOrResume, pause
    }

    private var random: SplitMix64
    private let mode: ModelSequence.Mode
    private let defects: ModelKnownDefects
    private let profile: Profile
    private var model: ReferenceModel
    private var commands: [ModelCommand] = []
    private var nextID = 0
    private let widths: [Int]
    /// Keeps out the shapes of the known defects.
    private var filter: ModelDefectFilter

    /// The sequence for `seed`.
    static func sequence(seed: UInt64, mode: ModelSequence.Mode, defects: ModelKnownDefects) -> ModelSequence {
        var generator = ModelGenerator(seed: seed, mode: mode, defects: defects)
        generator.generate()
        let sequence = ModelSequence(mode: mode, queueWidths: generator.widths, commands: generator.commands, seed: seed)
        return ReferenceModel.normalized(sequence, defects: defects).sequence
    }

    private init(seed: UInt64, mode: ModelSequence.Mode, defects: ModelKnownDefects) {
        var random = SplitMix64(seed: seed)
        self.mode = mode
        self.defects = defects
        profile = random.chance(0.35) ? .mixed : random.pick(Profile.allCases)
        let queueCount = Int.random(in: 1...3, using: &random)
        var widths = [random.chance(0.75) ? 1 : -1]
        for _ in 1..<queueCount {
            widths.append(random.pick([1, 1, 2, -1, -1]))
        }
        if profile == .groups && !widths.contains(-1) { widths.append(-1) }
        self.widths = widths
        self.random = random
        model = ReferenceModel(mode: mode, queueWidths: widths)
        filter = ModelDefectFilter(defects)
    }

    // MARK: Drawing

    private func weight(_ move: Move) -> Int {
        var weight: Int
        switch move {
        case .make: weight = 10
        case .enqueue: weight = 10
        case .enqueueBatch: weight = 4
        case .addChild: weight = 4
        case .addDependency: weight = 10
        case .lateDependency: weight = 4
        case .removeDependency: weight = 3
        case .reAdd: weight = 3
        case .fanReAdd: weight = 1
        case .setPriority: weight = 4
        case .priorityStorm: weight = 2
        case .cancel: weight = 4
        case .cancelWithError: weight = 1
        case .addCondition: weight = 5
        case .conditionOnChild: weight = 1
        case .observe: weight = 3
        case .observeDependenciesFromHandler: weight = 1
        case .observeOperationsFromHandler: weight = 1
        case .onRun: weight = 3
        case .onCallback: weight = 3
        case .startByHand: weight = 1
        case .runUntilQuiet: weight = mode == .staged ? 2 : 0
        case .keepSuspended: weight = mode == .staged ? 1 : 0
        case .suspendOrResume: weight = mode == .interleaved ? 3 : 0
        case .pause: weight = mode == .interleaved ? 4 : 0
        }
        switch (profile, move) {
        case (.fans, .fanReAdd): weight = 12
        case (.fans, .reAdd), (.fans, .removeDependency): weight *= 3
        case (.lateDependencies, .lateDependency): weight = 16
        case (.lateDependencies, .addCondition), (.lateDependencies, .runUntilQuiet): weight *= 3
        case (.priorities, .setPriority): weight = 20
        case (.priorities, .priorityStorm): weight = 8
        case (.groups, .addChild), (.groups, .conditionOnChild): weight *= 4
        case (.groups, .onRun): weight *= 3
        case (.observers, .observe), (.observers, .observeDependenciesFromHandler), (.observers, .observeOperationsFromHandler),
             (.observers, .onCallback):
            weight *= 4
        case (.cancellation, .cancel), (.cancellation, .cancelWithError), (.cancellation, .addCondition):
            weight *= 3
        case (.exclusivity, .addCondition), (.exclusivity, .lateDependency): weight *= 3
        case (.exclusivity, .keepSuspended): weight = 6
        default: break
        }
        return weight
    }

    private mutating func drawMove() -> Move {
        let weights = Move.allCases.map(weight)
        var ticket = Int.random(in: 0..<weights.reduce(0, +), using: &random)
        for (move, weight) in zip(Move.allCases, weights) {
            if ticket < weight { return move }
            ticket -= weight
        }
        return .make
    }

    /// Keeps `command` if the model takes it.
    @discardableResult
    private mutating func emit(_ command: ModelCommand) -> Bool {
        var next = model
        guard next.apply(command), filter.allows(command, on: model, giving: next) else { return false }
        model = next
        filter.played(command, giving: model)
        commands.append(command)
        return true
    }

    private mutating func generate() {
        for _ in 0..<Int.random(in: 3...7, using: &random) {
            makeOperation()
        }
        let steps = Int.random(in: 8...36, using: &random)
        var attempts = 0
        while commands.count < steps + 3 && attempts < steps * 6 {
            attempts += 1
            step(drawMove())
        }
        // Most of what was made goes somewhere, so that it runs.
        for id in ids(where: { $0.home == .free && $0.isPending && !$0.startedByHand }) where random.chance(0.75) {
            if let group = randomGroup(), random.chance(0.25) {
                emit(.addChild(id, group: group))
            } else {
                emit(.enqueue([id], queue: queueFor(id)))
            }
        }
    }

    // MARK: Choosing

    private func ids(where predicate: (ReferenceModel.OpState) -> Bool) -> [Int] {
        model.ops.keys.sorted().filter { predicate(model.ops[$0]!) }
    }

    private mutating func randomOp(where predicate: (ReferenceModel.OpState) -> Bool = { _ in true }) -> Int? {
        let candidates = ids(where: predicate)
        return candidates.isEmpty ? nil : random.pick(candidates)
    }

    private mutating func randomGroup() -> Int? {
        randomOp { $0.kind.isGroup && $0.life != .finished }
    }

    private mutating func queueFor(_ id: Int) -> Int {
        let kind = model.ops[id]!.kind
        let fitting = widths.indices.filter { !kind.isGroup || widths[$0] == -1 }
        return fitting.isEmpty ? 0 : random.pick(fitting)
    }

    private mutating func randomKind() -> ModelOpKind {
        var kinds: [(ModelOpKind, Int)] = [
            (.sync, 40), (.blocks, 8), (.asyncInline, 10), (.asyncOtherThread, 12), (.asyncThrowing, 8),
            (.asyncFinishedByDidCancel, defects.finishFromDidCancel ? 0 : 6),
            (.asyncBody, defects.startInTaskOfAsyncBody ? 0 : 10),
            (.group, widths.contains(-1) ? (profile == .groups ? 30 : 10) : 0),
            (.groupWithTail, widths.contains(-1) && !defects.groupRunsChildrenInExecute ? (profile == .groups ? 15 : 5) : 0),
        ]
        kinds = kinds.filter { $0.1 > 0 }
        var ticket = Int.random(in: 0..<kinds.map(\.1).reduce(0, +), using: &random)
        for (kind, weight) in kinds {
            if ticket < weight { return kind }
            ticket -= weight
        }
        return .sync
    }

    @discardableResult
    private mutating func makeOperation(_ kind: ModelOpKind? = nil) -> Int {
        let id = nextID
        nextID += 1
        emit(.make(id, kind ?? randomKind()))
        return id
    }

    // MARK: Steps

    private mutating func step(_ move: Move) {
        switch move {
        case .make:
            makeOperation()
        case .enqueue:
            if let id = randomOp(where: { $0.home == .free && $0.isPending && !$0.startedByHand }) {
                emit(.enqueue([id], queue: queueFor(id)))
            }
        case .enqueueBatch:
            let free = ids(where: { $0.home == .free && $0.isPending && !$0.startedByHand && !$0.kind.isGroup })
            guard free.count >= 2 else { return }
            let batch = Array(free.shuffled(using: &random).prefix(Int.random(in: 2...4, using: &random)))
            emit(.enqueue(batch, queue: Int.random(in: 0..<widths.count, using: &random)))
        case .addChild:
            if let group = randomGroup(), let id = randomOp(where: { $0.home == .free && $0.isPending }) {
                emit(.addChild(id, group: group))
            }
        case .addDependency:
            if let id = randomOp(), let dependency = randomOp() {
                emit(.addDependency(id, on: dependency))
            }
        case .lateDependency:
            // A dependency for an operation that is in a queue already, ready (its conditions may
            // have passed): it must wait again.
            if let id = randomOp(where: { $0.queue != nil && $0.isPending && !$0.cancelled }),
               let dependency = randomOp(where: { $0.isPending }) {
                emit(.addDependency(id, on: dependency))
            }
        case .removeDependency:
            let edges = model.ops.keys.sorted().flatMap { id in model.ops[id]!.deps.filter { $0 >= 0 }.map { [id, $0] } }
            if !edges.isEmpty {
                let edge = random.pick(edges)
                emit(.removeDependency(edge[0], on: edge[1]))
            }
        case .reAdd:
            let edges = model.ops.keys.sorted().flatMap { id in model.ops[id]!.deps.filter { $0 >= 0 }.map { [id, $0] } }
            if !edges.isEmpty {
                let edge = random.pick(edges)
                if emit(.removeDependency(edge[0], on: edge[1])) {
                    emit(.addDependency(edge[0], on: edge[1]))
                }
            }
        case .fanReAdd:
            fanReAdd()
        case .setPriority:
            if let id = randomOp() {
                emit(.setPriority(id, random.pick(ModelPriority.allCases)))
            }
        case .priorityStorm:
            if let id = randomOp(where: { $0.scheduled || $0.isPending }) {
                let long = !defects.ticketWrap && random.chance(0.06)
                emit(.priorityStorm(id, changes: long ? 65_536 + Int.random(in: 0...3, using: &random) : Int.random(in: 1...300, using: &random)))
            }
        case .cancel:
            if let id = randomOp(where: { $0.isPending && !$0.cancelled }) { emit(.cancel(id)) }
        case .cancelWithError:
            if let id = randomOp(where: { $0.isPending && !$0.cancelled && !$0.kind.isGroup }) { emit(.cancelWithError(id)) }
        case .addCondition:
            if let id = randomOp(where: { $0.home == .free && $0.isPending }), let condition = randomCondition(for: id) {
                emit(.addCondition(id, condition))
            }
        case .conditionOnChild:
            // `.dependency(x)` where x is a group's child that has not started (defect 16's shape).
            guard let child = randomOp(where: { $0.group != nil && $0.isPending && !$0.kind.isGroup }),
                  let id = randomOp(where: { $0.home == .free && $0.isPending }) else { return }
            emit(.addCondition(id, .dependency(child)))
        case .observe:
            if let id = randomOp(where: { $0.isPending }) { emit(.observe(id)) }
        case .observeDependenciesFromHandler:
            if let id = randomOp() { emit(.observeDependenciesFromHandler(id)) }
        case .observeOperationsFromHandler:
            emit(.observeOperationsFromHandler(queue: Int.random(in: 0..<widths.count, using: &random)))
        case .onRun:
            onRun()
        case .onCallback:
            if let id = randomOp(where: { $0.isPending }) {
                emit(.onCallback(id, random.pick(ModelCallback.allCases)))
            }
        case .startByHand:
            if let id = randomOp(where: { $0.home == .free && $0.isPending }) { emit(.startByHand(id)) }
        case .runUntilQuiet:
            emit(.runUntilQuiet)
        case .keepSuspended:
            // Preferably one with an exclusive operation, with other queues left to run them.
            let exclusive = widths.indices.filter { queue in model.ops.values.contains { $0.isExclusive && $0.queue == queue } }
            let queue = !exclusive.isEmpty && random.chance(0.7) ? random.pick(exclusive) : Int.random(in: 0..<widths.count, using: &random)
            emit(.keepSuspended(queue: queue))
        case .suspendOrResume:
            let queue = Int.random(in: 0..<widths.count, using: &random)
            emit(model.queues[queue].suspended ? .resume(queue: queue) : .suspend(queue: queue))
        case .pause:
            emit(.pause(random.pick([0, 10, 50, 200, 1_000])))
        }
    }

    /// An operation with many dependents; one of them, which also waits for another operation,
    /// has its dependency removed and added back (defect 1's shape).
    private mutating func fanReAdd() {
        guard let dependency = randomOp(where: { $0.isPending }) else { return }
        let first = 100 + nextID * 50
        let count = random.pick([15, 16, 16, 17, 20])
        guard emit(.fan(on: dependency, first: first, count: count, queue: Int.random(in: 0..<widths.count, using: &random))) else { return }
        let member = first + Int.random(in: 0..<count, using: &random)
        let other = makeOperation(.sync)
        emit(.addDependency(member, on: other))
        if emit(.removeDependency(member, on: dependency)) {
            emit(.addDependency(member, on: dependency))
        }
        emit(.enqueue([other], queue: Int.random(in: 0..<widths.count, using: &random)))
    }

    private mutating func randomCondition(for id: Int) -> ModelConditionSpec? {
        var choices: [(ModelConditionSpec, Int)] = [
            (.predicate(random.chance(0.7)), 6), (.noFailedDependencies, 5), (.noCancelledDependencies, 4),
            (.exclusive(Int.random(in: 0..<2, using: &random)),
             model.ops[id]!.kind.isGroup || (defects.exclusivityInSuspendedQueue && model.queues.contains(where: \.keptSuspended)) ? 0
                : profile == .exclusivity ? 30 : 5),
            (.not(random.chance(0.5)), 2), (.any(random.chance(0.5), random.chance(0.5)), 2),
        ]
        choices += [
            (.evaluate(random.chance(0.7)), 4), (.evaluateThrows, 1),
            (.cancelsItsOperation, profile == .cancellation ? 4 : 1),
            (.cancelsItsOperationAndWaits, defects.cancellationOfConditionTask ? 0 : (profile == .cancellation ? 4 : 1)),
        ]
        if let other = randomOp(where: { $0.isPending && !$0.kind.isGroup }), other != id {
            choices.append((.dependency(other), 3))
        }
        choices = choices.filter { $0.1 > 0 }
        var ticket = Int.random(in: 0..<choices.map(\.1).reduce(0, +), using: &random)
        for (condition, weight) in choices {
            if ticket < weight { return condition }
            ticket -= weight
        }
        return nil
    }

    private mutating func onRun() {
        guard let id = randomOp(where: { $0.kind.hasBody && $0.isPending && !$0.startedByHand }) else { return }
        let op = model.ops[id]!
        var actions: [ModelBodyAction] = []
        if let dependent = randomOp(where: { $0.deps.contains(id) && $0.isPending }) { actions.append(.cancel(dependent)) }
        if let target = randomOp(where: { $0.home == .free && $0.isPending && !$0.kind.isGroup && !$0.startedByHand }), target != id {
            actions.append(.addToCurrentQueue(target))
            actions.append(.produce(target))
            if op.group != nil { actions.append(.addToOwnGroup(target)) }
        }
        if let dependency = op.deps.filter({ $0 >= 0 }).randomElement(using: &random) { actions.append(.waitForDependency(dependency)) }
        if !actions.isEmpty { emit(.onRun(id, random.pick(actions))) }
    }
}
