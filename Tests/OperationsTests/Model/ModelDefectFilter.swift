/// Tells which steps make the shape of a defect that ``ModelKnownDefects`` keeps out, given the
/// steps before them: the generator does not make them, and the shrinker does not make them
/// either (deleting a step can turn the ones after it into such a shape).
struct ModelDefectFilter {
    let defects: ModelKnownDefects
    /// Dependencies removed so far (to add one back is the shape of defect 1).
    private var removed: Set<[Int]> = []
    /// Operations that had a dependency removed while it was in a queue (it may have been
    /// finishing then).
    private var lostQueuedDependency: Set<Int> = []
    /// The most dependents each operation has had at once.
    private var peakDependents: [Int: Int] = [:]

    init(_ defects: ModelKnownDefects) {
        self.defects = defects
    }

    /// Whether `command`, played on `model` (the sequence so far), avoids every switched-on shape.
    /// `after` is the model once it is played.
    func allows(_ command: ModelCommand, on model: ReferenceModel, giving after: ReferenceModel) -> Bool {
        switch command {
        case .make(_, let kind):
            if defects.finishFromDidCancel && kind == .asyncFinishedByDidCancel { return false }
            if defects.startInTaskOfAsyncBody && kind == .asyncBody { return false }
            if defects.groupRunsChildrenInExecute && kind == .groupWithTail { return false }
        case .enqueue(let ids, _):
            if defects.gatedOperationInBatch && ids.count > 1 && ids.contains(where: { !(model.ops[$0]?.conditions.isEmpty ?? true) }) {
                return false
            }
        case .addDependency(let id, let dependency):
            if defects.dependencyOnOperationCancelledByABody && model.mode == .staged
                && model.ops.values.contains(where: { $0.bodyActions.contains(.cancel(dependency)) }) {
                return false
            }
            if defects.dependentReAdd && removed.contains([id, dependency]) && (peakDependents[dependency] ?? 0) >= 15 {
                return false
            }
            if defects.lateDependencyAfterConditions, let op = model.ops[id], op.queue != nil || op.group != nil,
               op.isPending, !op.cancelled, !model.isFinished(dependency) {
                // Staged, the model knows whether it is ready; interleaved, one with conditions
                // may have passed them by now.
                let late = model.mode == .staged ? model.isReady(id) || op.gate == .passed : !op.conditions.isEmpty
                if late { return false }
            }
        case .priorityStorm(_, let changes):
            if defects.ticketWrap && changes >= 65_536 { return false }
        case .addCondition(_, let condition):
            switch condition {
            case .cancelsItsOperationAndWaits where defects.cancellationOfConditionTask:
                return false
            case .dependency(let other) where defects.conditionDependencyOnGroupChild && model.ops[other]?.group != nil:
                return false
            case .exclusive where defects.exclusivityInSuspendedQueue && model.queues.contains(where: \.keptSuspended):
                return false
            default:
                break
            }
        case .observeDependenciesFromHandler, .observeOperationsFromHandler:
            if defects.observerRegisteredInHandler { return false }
        case .onCallback(_, let callback):
            if defects.waitInDidFinish && callback == .didFinishWaits { return false }
            if defects.waitInIsFinishedObserver && callback == .isFinishedObserverWaits { return false }
        case .keepSuspended(let queue):
            // No exclusive operation in the queue, nor one that could still join it.
            if defects.exclusivityInSuspendedQueue
                && model.ops.values.contains(where: { $0.isExclusive && ($0.queue == queue || $0.home == .free) }) {
                return false
            }
        case .startByHand(let id):
            if defects.readyAfterRemovingFinishingDependency && model.mode == .interleaved && lostQueuedDependency.contains(id) {
                return false
            }
        case .onRun(_, .cancel(let cancelled)) where defects.dependencyOnOperationCancelledByABody && model.mode == .staged:
            if model.ops.values.contains(where: { $0.deps.contains(cancelled) }) { return false }
        case .onRun(let id, .produce), .onRun(let id, .addToOwnGroup):
            // Not a defect but a racy program, always left out: interleaved, a cancellation from
            // the sequence's thread may come while the body of an operation that its `didCancel`
            // observer finishes is still running, and from then on the operation is not
            // executing: producing from there is a programmer error, and traps (see
            // `Op.produce(_:)`).
            if model.mode == .interleaved, model.ops[id]?.kind == .asyncFinishedByDidCancel { return false }
        case .addChild, .removeDependency, .fan, .setPriority, .cancel, .cancelWithError, .observe, .onRun,
             .runUntilQuiet, .suspend, .resume, .pause:
            break
        }
        // An operation whose body adds to `OpQueue.current` must not be a group's child, however
        // it comes to be one (added as a child, or by a child's body):
        // - any such operation, while that known defect's shape is left out
        //   (``ModelKnownDefects/currentQueueOfGroupChild``);
        // - interleaved, always, one finished by its `didCancel` observer: the same racy program
        //   as producing from it (above). Its group's cancellation from the sequence's thread can
        //   finish it, and then its group, while its body still runs; the body then adds to the
        //   queue of a finished group's children, which is a programmer error and traps (seen in
        //   a CI run: seed 3481991545222436956).
        if defects.currentQueueOfGroupChild || after.mode == .interleaved {
            for (id, op) in after.ops where op.bodyActions.contains(where: { if case .addToCurrentQueue = $0 { true } else { false } }) {
                let leftOut = defects.currentQueueOfGroupChild || op.kind == .asyncFinishedByDidCancel
                if leftOut && after.becomesChild(id) { return false }
            }
        }
        return true
    }

    /// Notes a step that was kept.
    mutating func played(_ command: ModelCommand, giving model: ReferenceModel) {
        if case .removeDependency(let id, let dependency) = command {
            removed.insert([id, dependency])
            if !model.isCertainlyHomeless(dependency) { lostQueuedDependency.insert(id) }
        }
        for id in command.operations where model.ops[id] != nil {
            for dependency in model.ops[id]!.deps where dependency >= 0 {
                let count = model.ops.values.count { $0.deps.contains(dependency) }
                peakDependents[dependency] = max(peakDependents[dependency] ?? 0, count)
            }
        }
    }
}
