// The run phases of a staged sequence: what runs and finishes while the queues run, and the
// snapshots that let `ModelOrderCheck` tell which start orders a queue of width 1 allows.

extension ReferenceModel {
    /// Whether the operation starts now: it is in a running queue, or a child of a group that
    /// executes, and it is ready.
    func isRunnable(_ id: Int, active: Set<Int>) -> Bool {
        guard let op = ops[id], op.isPending, isReady(id) else { return false }
        switch op.home {
        case .queue(let queue): return active.contains(queue)
        case .child(let group): return ops[group]?.life == .executing
        case .free, .reserved, .heldByCondition: return false
        }
    }

    /// Plays one run phase with the queues in `active` running: a fixed point, since nothing
    /// the model admits depends on the order in which operations run.
    mutating func runPhase(active: Set<Int>) {
        let finishedBefore = Set(ops.keys.filter { isFinished($0) })
        var snapshots: [ModelOrderSnapshot] = []
        for queue in active.sorted() where queues[queue].width == 1 {
            snapshots.append(ModelOrderSnapshot(
                queue: queue, phase: phase,
                entries: queues[queue].ready.filter { ops[$0.op]!.isPending },
                members: [:], isDeterminate: !queues[queue].orderUnknown))
        }
        let pendingAtStart = Set(ops.keys.filter { ops[$0]!.isPending })
        let cancelledAtStart = Set(ops.keys.filter { ops[$0]!.cancelled })
        let membersAtStart = Set(queues.indices.flatMap { queue in queues[queue].members })
        for id in ops.keys { ops[id]!.cancelledByBodyOf = nil }

        var progress = true
        while progress {
            progress = false
            for id in ops.keys.sorted() {
                switch ops[id]!.life {
                case .pending:
                    guard isRunnable(id, active: active) else { continue }
                    if ops[id]!.kind.isGroup { startGroup(id) } else { runOp(id) }
                    progress = true
                case .executing:
                    if ops[id]!.children.allSatisfy(isFinished) {
                        finishGroup(id)
                        progress = true
                    }
                case .finished:
                    continue
                }
            }
        }
        // Members of suspended queues that became ready were listed at moments the model does
        // not order (their conditions were evaluated then: they are synchronous).
        for queue in queues.indices where !active.contains(queue) {
            let members = queues[queue].members
            for id in members where scheduleIfReady(id) {
                queues[queue].orderUnknown = true
            }
        }
        for queue in queues.indices {
            let ready = queues[queue].ready.filter { !isFinished($0.op) }
            queues[queue].ready = ready
            if active.contains(queue) { queues[queue].orderUnknown = false }
        }
        for var snapshot in snapshots {
            finishSnapshot(&snapshot, pendingAtStart: pendingAtStart, membersAtStart: membersAtStart,
                           cancelledAtStart: cancelledAtStart, finishedBefore: finishedBefore)
            orderSnapshots.append(snapshot)
        }
    }

    /// Fills in what each member of the snapshot's queue did in the phase, and whether the
    /// model can tell the order at all: every member's readiness must come from the queue itself.
    private func finishSnapshot(_ snapshot: inout ModelOrderSnapshot, pendingAtStart: Set<Int>, membersAtStart: Set<Int>,
                                cancelledAtStart: Set<Int>, finishedBefore: Set<Int>) {
        let queue = snapshot.queue
        for id in queues[queue].members where pendingAtStart.contains(id) {
            let op = ops[id]!
            let deps = op.deps.filter { $0 != Self.helper && !finishedBefore.contains($0) }
            if deps.contains(where: { ops[$0]?.queue != queue }) || op.isExclusive || op.hasAsynchronousConditions
                || op.kind.isGroup {
                snapshot.isDeterminate = false
            }
            if let actor = op.cancelledByBodyOf, ops[actor]?.queue != queue {
                snapshot.isDeterminate = false
            }
            if op.joinedHeld && !membersAtStart.contains(id) {
                // Joined in this phase with the operation whose `.dependency` condition held it.
                snapshot.isDeterminate = false
            }
            let effects = op.bodyActions.compactMap { action -> ModelOrderSnapshot.Effect? in
                if case .cancel(let target) = action, ops[target]?.queue == queue { return .cancels(target) }
                if let target = action.added, ops[target]?.queue == queue { return .adds(target) }
                return nil
            }
            snapshot.members[id] = ModelOrderSnapshot.Member(
                priority: op.priority, deps: deps, runs: op.ran && op.runPhase == phase,
                effects: effects, inQueueAtStart: membersAtStart.contains(id),
                isCancelledAtStart: cancelledAtStart.contains(id))
        }
    }

    /// Starts a plain operation (in a phase, or by hand): its conditions if closed, then its body
    /// and what the body does, unless it is cancelled; then it finishes.
    mutating func runOp(_ id: Int) {
        if !ops[id]!.cancelled && ops[id]!.gate == .closed {
            evaluateConditions(id)
        }
        if ops[id]!.cancelled {
            finishOp(id)
            return
        }
        ops[id]!.ran = true
        ops[id]!.runPhase = phase
        ops[id]!.depsAtRun = ops[id]!.deps
        ops[id]!.observerEvents?.append(.willExecute)
        if ops[id]!.callbacks.contains(.cancelInWillExecute) {
            cancel(id)
        }
        for action in ops[id]!.bodyActions {
            perform(action, by: id)
        }
        switch ops[id]!.kind {
        case .asyncThrowing:
            if ops[id]!.error.isNone { ops[id]!.error = .thrown }
        case .asyncFinishedByDidCancel:
            cancel(id)
        case .sync, .blocks, .asyncInline, .asyncOtherThread, .asyncBody, .group, .groupWithTail:
            break
        }
        finishOp(id)
    }

    private mutating func finishOp(_ id: Int) {
        if ops[id]!.scheduled { unschedule(id) }
        ops[id]!.life = .finished
        ops[id]!.finishPhase = phase
        ops[id]!.observerEvents?.append(contentsOf: [.willFinish, .didFinish])
    }

    private mutating func perform(_ action: ModelBodyAction, by actor: Int) {
        switch action {
        case .cancel(let target):
            cancel(target, byBodyOf: actor)
        case .addToCurrentQueue(let target), .produce(let target), .addToOwnGroup(let target):
            // Into the actor's queue, or its group: an operation added to `OpQueue.current` from a
            // group's child is a child of the group (issue 22, defect 13).
            let home = ops[actor]!.home
            switch home {
            case .queue, .child: break
            case .free, .reserved, .heldByCondition: preconditionFailure("op\(actor) ran without a queue or a group")
            }
            // The operations its `.dependency` conditions hold join first.
            let held = heldByCondition(of: target)
            for other in held { gotHome(other, home) }
            if !held.isEmpty, case .queue(let queue) = home { queues[queue].orderUnknown = true }
            gotHome(target, home)
            if case .produce = action {
                ops[actor]!.observerEvents?.append(.didProduce(target))
            }
        case .waitForDependency:
            break
        }
    }

    /// A group starts (even when cancelled: its children are cancelled then, and it finishes
    /// once they have).
    private mutating func startGroup(_ id: Int) {
        if !ops[id]!.cancelled && ops[id]!.gate == .closed {
            evaluateConditions(id)
        }
        if ops[id]!.scheduled { unschedule(id) }
        ops[id]!.cancelledAtStart = ops[id]!.cancelled
        ops[id]!.life = .executing
        ops[id]!.ran = true
        ops[id]!.runPhase = phase
        ops[id]!.depsAtRun = ops[id]!.deps
        ops[id]!.observerEvents?.append(.willExecute)
        if ops[id]!.cancelled {
            for child in ops[id]!.children where ops[child]!.isPending {
                cancel(child)
            }
        }
    }

    private mutating func finishGroup(_ id: Int) {
        if ops[id]!.error.isNone {
            let failed = ops[id]!.children.count { !errorOf($0).isNone }
            if failed > 0 { ops[id]!.error = .group(failed) }
        }
        ops[id]!.life = .finished
        ops[id]!.finishPhase = phase
        ops[id]!.observerEvents?.append(contentsOf: [.willFinish, .didFinish])
    }
}
