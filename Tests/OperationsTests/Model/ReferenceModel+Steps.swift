// The steps of a sequence: each is checked (a refused step changes nothing) and then played.

extension ReferenceModel {
    /// Plays `command` if it is legal; returns whether it was.
    mutating func apply(_ command: ModelCommand) -> Bool {
        var next = self
        guard next.applyStep(command) else { return false }
        // Staged, nothing runs between phases. A child of a group that executes does not wait for
        // a phase, though: its group's child queue is not one the driver suspends, so a step that
        // makes such a child ready (removing its last dependency, cancelling it, adding a ready
        // child) would let it run, or finish, while the driver goes on with the next steps.
        if next.isStaged && next.ops.keys.contains(where: { next.isRunnable($0, active: []) }) { return false }
        self = next
        return true
    }

    private mutating func applyStep(_ command: ModelCommand) -> Bool {
        switch command {
        case .make(let id, let kind): make(id, kind)
        case .enqueue(let ids, let queue): enqueue(ids, queue: queue)
        case .addChild(let id, let group): addChild(id, group: group)
        case .addDependency(let id, let dependency): addDependency(id, on: dependency)
        case .removeDependency(let id, let dependency): removeDependency(id, on: dependency)
        case .fan(let on, let first, let count, let queue): fan(on: on, first: first, count: count, queue: queue)
        case .setPriority(let id, let priority): setPriority(id, priority)
        case .priorityStorm(let id, let changes): priorityStorm(id, changes: changes)
        case .cancel(let id): cancelStep(id, withError: false)
        case .cancelWithError(let id): cancelStep(id, withError: true)
        case .addCondition(let id, let condition): addCondition(id, condition)
        case .observe(let id): observe(id)
        case .observeDependenciesFromHandler(let id): observeDependenciesFromHandler(id)
        case .observeOperationsFromHandler(let queue): observeOperationsFromHandler(queue)
        case .onRun(let id, let action): onRun(id, action)
        case .onCallback(let id, let callback): onCallback(id, callback)
        case .startByHand(let id): startByHand(id)
        case .runUntilQuiet: runUntilQuiet()
        case .keepSuspended(let queue): keepSuspended(queue)
        case .suspend(let queue): setSuspended(queue, true)
        case .resume(let queue): setSuspended(queue, false)
        case .pause(let microseconds): mode == .interleaved && (0...2_000).contains(microseconds)
        }
    }

    private var isStaged: Bool { mode == .staged }

    private mutating func make(_ id: Int, _ kind: ModelOpKind) -> Bool {
        guard id >= 0, ops[id] == nil, ops.count < Self.maximumOperations else { return false }
        ops[id] = OpState(kind: kind)
        return true
    }

    // MARK: Queues and groups

    /// In a staged sequence, `async` conditions are evaluated only while queues run (when the
    /// driver waits for the phase to end), never while the driver goes on with its steps.
    private func wouldEvaluateAsynchronouslyNow(_ id: Int, inKeptQueue: Bool) -> Bool {
        guard isStaged, let op = ops[id], op.hasAsynchronousConditions, !op.cancelled else { return false }
        return inKeptQueue || isReady(id)
    }

    private mutating func enqueue(_ ids: [Int], queue: Int) -> Bool {
        guard queues.indices.contains(queue), !ids.isEmpty, Set(ids).count == ids.count else { return false }
        let kept = queues[queue].keptSuspended
        for id in ids {
            guard let op = ops[id], op.home == .free, op.isPending, !op.startedByHand else { return false }
            // Groups only in queues of the default width: a group holding the only slot of a
            // queue while its child waits for another member of that queue would deadlock.
            if op.kind.isGroup && queues[queue].width != -1 { return false }
            if wouldEvaluateAsynchronouslyNow(id, inKeptQueue: kept) { return false }
            for held in heldByCondition(of: id) where wouldEvaluateAsynchronouslyNow(held, inKeptQueue: kept) {
                return false
            }
        }
        var contributed: [Int] = []
        for id in ids {
            for held in heldByCondition(of: id) where !contributed.contains(held) {
                contributed.append(held)
            }
        }
        for held in contributed {
            gotHome(held, .queue(queue))
        }
        if !contributed.isEmpty {
            // They join when their operation is added: the model does not pin down how they are
            // listed relative to the operations added with it.
            queues[queue].orderUnknown = true
        }
        for id in ids {
            gotHome(id, .queue(queue))
        }
        if isStaged {
            for id in contributed + ids {
                scheduleIfReady(id)
            }
        }
        return true
    }

    private mutating func addChild(_ id: Int, group: Int) -> Bool {
        guard let op = ops[id], let owner = ops[group], owner.kind.isGroup, group != id, op.home == .free,
              op.isPending, !op.startedByHand, owner.life != .finished, !op.isExclusive else { return false }
        // Not into itself, nor into one of its own descendants.
        var current = group
        while case .child(let parent)? = ops[current]?.home {
            if parent == id { return false }
            current = parent
        }
        if !isStaged && ops[current]!.home != .free {
            // Interleaved: the outermost group may have started and finished meanwhile.
            return false
        }
        guard staysAcyclic({ $0.ops[id]!.home = .child(group); $0.ops[group]!.children.append(id) }) else { return false }
        let executing = owner.life == .executing
        if executing {
            for candidate in [id] + heldByCondition(of: id) where wouldEvaluateAsynchronouslyNow(candidate, inKeptQueue: false) {
                return false
            }
        }
        let held = heldByCondition(of: id)
        for other in held {
            gotHome(other, .child(group))
        }
        gotHome(id, .child(group))
        if isStaged && executing {
            for candidate in held + [id] {
                scheduleIfReady(candidate)
            }
        }
        return true
    }

    private mutating func fan(on: Int, first: Int, count: Int, queue: Int) -> Bool {
        guard ops[on] != nil, (1...40).contains(count), first >= 0, queues.indices.contains(queue),
              ops.count + count <= Self.maximumOperations,
              (first..<first + count).allSatisfy({ ops[$0] == nil }) else { return false }
        for id in first..<first + count {
            ops[id] = OpState(kind: .sync)
            ops[id]!.deps = [on]
        }
        return enqueue(Array(first..<first + count), queue: queue)
    }

    // MARK: Dependencies

    private mutating func addDependency(_ id: Int, on dependency: Int) -> Bool {
        guard let op = ops[id], ops[dependency] != nil, id != dependency, !op.deps.contains(dependency) else { return false }
        if isStaged && op.isPending && !op.cancelled && op.gate == .passed && isFinished(dependency) {
            // Whether conditions that passed are evaluated again for a dependency that holds
            // nothing back is not documented.
            return false
        }
        guard staysAcyclic({ $0.ops[id]!.deps.append(dependency) }) else { return false }
        ops[id]!.deps.append(dependency)
        dependenciesChanged(id)
        if isStaged && ops[id]!.isPending && !ops[id]!.cancelled && !isFinished(dependency) {
            // A late dependency holds the operation back again: it leaves its ready list, and its
            // conditions are evaluated again once it is ready (issue 22, defect 15).
            if ops[id]!.scheduled { unschedule(id) }
            if ops[id]!.gate == .passed { ops[id]!.gate = .closed }
        }
        return true
    }

    private mutating func removeDependency(_ id: Int, on dependency: Int) -> Bool {
        guard let op = ops[id], dependency != Self.helper, op.deps.contains(dependency),
              !pinned.contains([id, dependency]) else { return false }
        var after = self
        after.ops[id]!.deps.removeAll { $0 == dependency }
        if after.isSchedulable(id) && !op.scheduled && after.isReady(id)
            && after.wouldEvaluateAsynchronouslyNow(id, inKeptQueue: false) && op.gate == .closed {
            return false
        }
        ops[id]!.deps.removeAll { $0 == dependency }
        dependenciesChanged(id)
        if !isStaged { ops[id]!.removedDeps.insert(dependency) }
        if isStaged { scheduleIfReady(id) }
        return true
    }

    // MARK: Priorities and cancellation

    /// An operation on a ready list moves to the end of its (new) priority's list.
    private mutating func relist(_ id: Int) {
        guard isStaged, ops[id]!.isPending, ops[id]!.scheduled else { return }
        unschedule(id)
        schedule(id)
    }

    private mutating func setPriority(_ id: Int, _ priority: ModelPriority) -> Bool {
        guard let op = ops[id], op.priority != priority else { return false }
        ops[id]!.priority = priority
        relist(id)
        return true
    }

    private mutating func priorityStorm(_ id: Int, changes: Int) -> Bool {
        guard let op = ops[id], changes >= 1 else { return false }
        ops[id]!.priority = changes % 2 == 1 ? op.priority.stormPartner : op.priority
        relist(id)
        return true
    }

    private mutating func cancelStep(_ id: Int, withError: Bool) -> Bool {
        guard let op = ops[id], op.life != .finished, !op.cancelled else { return false }
        if withError && op.kind.isGroup { return false }
        cancel(id, withError: withError)
        return true
    }

    // MARK: Conditions

    private mutating func addCondition(_ id: Int, _ condition: ModelConditionSpec) -> Bool {
        guard let op = ops[id], op.isPending, !op.startedByHand, op.conditions.count < 3,
              !op.hasCancellingCondition else { return false }
        switch op.home {
        case .free, .heldByCondition, .reserved: break
        case .queue, .child: return false
        }
        switch condition {
        case .exclusive(let category):
            // Exclusivity only for plain operations that go to a queue themselves: a group holding
            // a category while a child waits for another holder, or a child taking one while its
            // group holds a slot, can deadlock by design (see ComposingOperations.md).
            guard !op.kind.isGroup, op.home == .free, !op.categories.contains(category) else { return false }
        case .dependency(let other):
            guard let target = ops[other], other != id, target.isPending, !target.startedByHand,
                  !target.kind.isGroup, !target.isExclusive, !op.conditions.contains(condition) else { return false }
            switch target.home {
            case .free, .queue, .child: break
            case .reserved, .heldByCondition: return false
            }
            guard staysAcyclic({ if !$0.ops[id]!.deps.contains(other) { $0.ops[id]!.deps.append(other) } }) else { return false }
        case .predicate, .evaluate, .evaluateThrows, .noFailedDependencies, .noCancelledDependencies, .not, .any,
             .cancelsItsOperation, .cancelsItsOperationAndWaits:
            break
        }
        ops[id]!.conditions.append(condition)
        ops[id]!.gate = .closed
        if case .dependency(let other) = condition {
            pinned.insert([id, other])
            if !ops[id]!.deps.contains(other) {
                ops[id]!.deps.append(other)
                dependenciesChanged(id)
            }
            if ops[other]!.home == .free {
                gotHome(other, .heldByCondition(of: id))
            }
        }
        return true
    }

    // MARK: Observers and callbacks

    private mutating func observe(_ id: Int) -> Bool {
        guard let op = ops[id], !op.isObserved, op.isPending else { return false }
        if !isStaged && (op.home != .free || op.startedByHand) { return false }
        ops[id]!.observerEvents = [.attach]
        ops[id]!.isObserved = true
        return true
    }

    private mutating func observeDependenciesFromHandler(_ id: Int) -> Bool {
        guard let op = ops[id], op.dependencyVersions == nil else { return false }
        ops[id]!.dependencyVersions = [op.deps]
        ops[id]!.helperPending = true
        return true
    }

    private mutating func observeOperationsFromHandler(_ queue: Int) -> Bool {
        guard queues.indices.contains(queue), !queues[queue].observesOperationsFromHandler else { return false }
        queues[queue].observesOperationsFromHandler = true
        return true
    }

    private mutating func onRun(_ id: Int, _ action: ModelBodyAction) -> Bool {
        guard let op = ops[id], op.kind.hasBody, op.isPending, !op.startedByHand, op.bodyActions.count < 3,
              !op.bodyActions.contains(action) else { return false }
        if !isStaged && op.home != .free { return false }
        switch action {
        case .cancel(let target):
            guard let other = ops[target], target != id, other.deps.contains(id), other.life != .finished else { return false }
            pinned.insert([target, id])
        case .addToCurrentQueue(let target), .produce(let target), .addToOwnGroup(let target):
            guard let other = ops[target], target != id, other.home == .free, other.isPending, !other.startedByHand,
                  !other.kind.isGroup, !other.isExclusive else { return false }
            if case .addToOwnGroup = action, op.group == nil { return false }
            guard staysAcyclic({ $0.ops[target]!.home = .reserved(by: id) }) else { return false }
            gotHome(target, .reserved(by: id))
        case .waitForDependency(let dependency):
            guard dependency != Self.helper, op.deps.contains(dependency) else { return false }
            pinned.insert([id, dependency])
        }
        ops[id]!.bodyActions.append(action)
        return true
    }

    private mutating func onCallback(_ id: Int, _ callback: ModelCallback) -> Bool {
        guard let op = ops[id], op.isPending, !op.startedByHand, !op.callbacks.contains(callback) else { return false }
        if !isStaged && op.home != .free { return false }
        if callback == .cancelInWillExecute && (op.kind.isGroup || op.kind == .asyncFinishedByDidCancel) { return false }
        ops[id]!.callbacks.insert(callback)
        return true
    }

    // MARK: Starting by hand and phases

    private mutating func startByHand(_ id: Int) -> Bool {
        guard let op = ops[id], op.home == .free, op.isPending, !op.startedByHand, !op.kind.isGroup, !op.isExclusive,
              isReady(id), op.bodyActions.allSatisfy({ $0.added == nil }) else { return false }
        ops[id]!.startedByHand = true
        runOp(id)
        if isStaged {
            scheduleTogether(dependents(of: id))
        }
        return true
    }

    private mutating func runUntilQuiet() -> Bool {
        guard isStaged, phase < Self.maximumQuietPhases else { return false }
        runPhase(active: Set(queues.indices.filter { !queues[$0].keptSuspended }))
        phase += 1
        return true
    }

    private mutating func keepSuspended(_ queue: Int) -> Bool {
        guard isStaged, queues.indices.contains(queue), !queues[queue].keptSuspended else { return false }
        for id in queues[queue].members where ops[id]!.isPending && ops[id]!.hasAsynchronousConditions {
            return false
        }
        queues[queue].keptSuspended = true
        return true
    }

    private mutating func setSuspended(_ queue: Int, _ suspended: Bool) -> Bool {
        guard !isStaged, queues.indices.contains(queue), queues[queue].suspended != suspended else { return false }
        queues[queue].suspended = suspended
        return true
    }

    /// Plays the last phases of a staged sequence: every queue but those kept suspended, then all.
    mutating func finish() {
        guard isStaged else { return }
        runPhase(active: Set(queues.indices.filter { !queues[$0].keptSuspended }))
        phase += 1
        if queues.contains(where: \.keptSuspended) {
            runPhase(active: Set(queues.indices))
            phase += 1
        }
        phaseCount = phase
    }
}
