/// Compares what the library did (a ``ModelRecorder``) with what the ``ReferenceModel`` allows.
///
/// A staged sequence is compared exactly: each operation's outcome, the phase it ran in, the
/// dependencies its body saw, its observers' callbacks and observed changes, and on queues of
/// width 1 the start order (``ModelOrderCheck``). An interleaved sequence is checked against the
/// rules that hold whatever the timing. Both check that bodies never ran before their (binding)
/// dependencies finished, that exclusivity categories and queue widths were respected, that groups
/// finished after their children, and that everything that must finish did, exactly once.
struct ModelChecker {
    let sequence: ModelSequence
    let model: ReferenceModel
    let outcome: ModelRunner.Outcome
    /// The known defects switched on.
    var defects = ModelKnownDefects.none

    private var recorder: ModelRecorder { outcome.recorder }
    private var isStaged: Bool { sequence.mode == .staged }

    /// The failure, or `nil` if the run is one the model allows.
    func failure() -> ModelFailure? {
        var found: [(ModelFailure.Category, String)] = outcome.failures
        // After a hang, the records of what did not happen are noise.
        if found.isEmpty {
            let finishers = expectedFinishers()
            let mayFinish = isStaged ? finishers
                : model.interleavedFinishers(added: recorder.addedByBodies, cancelledByBodies: recorder.cancelledByBodies, bindingOnly: true)
            for id in model.ops.keys.sorted() {
                checkOperation(id, finishers: finishers, mayFinish: mayFinish, into: &found)
            }
            checkQueues(finishers: finishers, mayFinish: mayFinish, into: &found)
            checkExclusivity(into: &found)
            if isStaged { checkStartOrders(into: &found) }
        }
        guard let first = found.first else { return nil }
        return ModelFailure(category: first.0, details: found.map { "[\($0.0.rawValue)] \($0.1)" })
    }

    private func expectedFinishers() -> Set<Int> {
        if isStaged {
            return Set(model.ops.keys.filter { model.ops[$0]!.finishPhase != nil })
        }
        return model.interleavedFinishers(added: recorder.addedByBodies, cancelledByBodies: recorder.cancelledByBodies)
    }

    // MARK: One operation

    /// `finishers` must finish, and only `mayFinish` may (the same in a staged sequence).
    private func checkOperation(_ id: Int, finishers: Set<Int>, mayFinish: Set<Int>, into found: inout [(ModelFailure.Category, String)]) {
        let op = model.ops[id]!
        let record = recorder.record(of: id)
        let name = "op\(id)"
        func report(_ category: ModelFailure.Category, _ message: String) {
            found.append((category, "\(name): \(message)"))
        }
        let finishes = finishers.contains(id)
        let ran = !record.starts.isEmpty
        guard let final = record.final else {
            report(.outcome, "no final state was recorded")
            return
        }

        // Conservation: every operation that must finish does, once; the others do not.
        if record.starts.count > 1 { report(.outcome, "its body ran \(record.starts.count) times") }
        if finishes && !final.isFinished {
            report(.hang, "did not finish")
        } else if final.isFinished && !mayFinish.contains(id) {
            report(.outcome, "finished, but the model says it never can")
        }
        if final.isExecuting && finishes { report(.outcome, "still reads as executing at the end") }
        if final.isFinished ? record.completions > 1 || (finishes && record.completions != 1) : record.completions != 0 {
            report(.outcome, "its completion block ran \(record.completions) times")
        }
        if record.completedUnfinished { report(.outcome, "its completion block ran before it read as finished") }

        // Outcome.
        if isStaged {
            if ran != op.ran { report(.outcome, ran ? "its body ran; the model says it does not" : "its body did not run; the model says it does") }
            if let start = record.starts.first, let phase = op.runPhase, start.phase != phase {
                report(.outcome, "ran in phase \(start.phase); the model runs it in phase \(phase)")
            }
            if final.isFinished {
                if final.isCancelled != op.cancelled { report(.outcome, "isCancelled is \(final.isCancelled); the model says \(op.cancelled)") }
                if !op.error.admits(final.error) { report(.outcome, "its error is \(final.error); the model says \(op.error)") }
            }
        } else {
            // (A group executes even when cancelled, to finish its cancelled children.)
            if ran && op.cancelledBeforeHome && !op.kind.isGroup { report(.outcome, "its body ran although it was cancelled before it was added anywhere") }
            if ran && op.neverRunsByItsConditions && !op.kind.isGroup { report(.outcome, "its body ran although one of its conditions always fails (or cancels it)") }
            if final.isFinished && op.neverRunsByItsConditions && !final.isCancelled { report(.outcome, "a condition that always fails did not cancel it") }
        }

        // Where and when the body ran.
        if let start = record.starts.first {
            if start.inTask && op.kind != .asyncBody {
                report(.thread, "its body (main() or the synchronous execute()) ran inside a Swift task, on the cooperative pool, not on the queue's threads")
            }
            // A cancelled group executes without waiting for its dependencies (to finish its
            // cancelled children), as a cancelled operation finishes without waiting for them.
            let ignoresDependencies = op.kind.isGroup && (isStaged ? op.cancelled && op.cancelledAtStart : final.isCancelled)
            let binding = ignoresDependencies ? [] : isStaged ? start.deps.filter { $0 != ReferenceModel.helper } : op.bindingDeps
            let early = start.unfinishedDeps.filter { binding.contains($0) }
            if !early.isEmpty {
                report(.dependencyOrder, "its body started before its dependencies \(early.map { "op\($0)" }.joined(separator: ", ")) had finished")
            }
            if isStaged, let expected = op.depsAtRun, start.deps != expected {
                report(.dependencyList, "its body saw dependencies \(describe(start.deps)); the model has \(describe(expected))")
            }
        }
        if record.tailMissed > 0 {
            report(.group, "\(record.tailMissed) of its bodies started before its group's execute() had returned (a group ran a child inside execute())")
        }
        if !record.unfinishedChildren.isEmpty {
            report(.group, "the group finished while its children \(record.unfinishedChildren.map { "op\($0)" }.joined(separator: ", ")) had not")
        }
        for failure in record.actionFailures { report(.callbacks, failure) }

        // Waits from callbacks return.
        var waits = 0
        if final.isFinished && !finishes {
            // One that need not finish may have finished as the final states were read (a group's
            // child, after its queues were found settled): its callbacks may not have run yet. The
            // waits it began, in its body and its callbacks, must have returned.
            waits = record.waitsBegun
        } else {
            if final.isFinished {
                waits += [ModelCallback.completionWaits, .isFinishedObserverWaits, .didFinishWaits].count(where: op.callbacks.contains)
            }
            if ran { waits += op.bodyActions.count { if case .waitForDependency = $0 { true } else { false } } }
        }
        if record.waitsReturned != waits {
            report(.callbacks, "\(record.waitsReturned) of its \(waits) waits from callbacks returned")
        }
        if record.conditionTaskStarted && !record.conditionTaskEnded {
            report(.hang, "the task of its condition did not end after it was cancelled")
        } else if record.conditionTaskEnded && !record.conditionTaskSawCancellation {
            report(.hang, "the task of its condition never saw the operation's cancellation")
        } else if isStaged && op.conditionWaitsForCancellation && !record.conditionTaskEnded {
            report(.hang, "the task of its condition never ended")
        }

        checkObservers(id, op: op, record: record, final: final, ran: ran, report: report)
    }

    private func describe(_ ids: [Int]) -> String {
        "[" + ids.map { $0 == ReferenceModel.helper ? "helper" : "op\($0)" }.joined(separator: ", ") + "]"
    }

    // MARK: Observers

    private func checkObservers(_ id: Int, op: ReferenceModel.OpState, record: ModelRecorder.Record,
                                final: ModelRecorder.Final, ran: Bool,
                                report: (ModelFailure.Category, String) -> Void) {
        typealias Change = ModelRecorder.Change
        if op.isObserved {
            var events = record.observerEvents
            // The delivery rules: a cancellation made while it finishes (another thread's, in an
            // interleaved sequence) comes between `willFinish` and `didFinish`.
            if !isStaged && events.suffix(3) == [.willFinish, .didCancel, .didFinish] {
                events.replaceSubrange(events.count - 3..<events.count, with: [.didCancel, .willFinish, .didFinish])
            }
            // Cancelled after the observers were attached (in a staged sequence the model knows
            // exactly; in an interleaved one, a cancellation it did not make came later).
            let cancelSeen = isStaged ? op.cancelledAfterObserving
                : final.isCancelled && !(op.cancelled && !op.cancelledAfterObserving)
            // Interleaved, a body that cancels it may have run before its observers were attached.
            let cancelUnknown = !isStaged && model.ops.values.contains { $0.bodyActions.contains(.cancel(id)) }
            if isStaged, let expected = op.observerEvents, events != expected {
                report(.observers, "its observer got \(events); the model says \(expected)")
            } else if let problem = Self.malformedObserverEvents(events, ran: ran, finished: final.isFinished,
                                                                 cancelled: cancelUnknown ? nil : cancelSeen) {
                report(.observers, "its observer got \(events): \(problem)")
            }
            for error in record.didFinishErrors where error != final.error {
                report(.observers, "didFinish got the error \(error), but its error is \(final.error)")
            }
            let executing = record.changes.filter { $0.property == .isExecuting }
            let finishing = record.changes.filter { $0.property == .isFinished }
            let cancelling = record.changes.filter { $0.property == .isCancelled }
            let expectedExecuting = !ran ? [] : [Change(property: .isExecuting, old: false, new: true)]
                + (final.isFinished ? [Change(property: .isExecuting, old: true, new: false)] : [])
            let expectedFinishing = final.isFinished ? [Change(property: .isFinished, old: false, new: true)] : []
            let expectedCancelling = cancelSeen ? [Change(property: .isCancelled, old: false, new: true)] : []
            // Cancelled as it started, its `didCancel` observer may finish it before its body runs:
            // it executed, without a body (and without `willExecute`).
            let finishedAsItStarted = !ran && final.isFinished && op.kind == .asyncFinishedByDidCancel
                && executing == [Change(property: .isExecuting, old: false, new: true), Change(property: .isExecuting, old: true, new: false)]
            if executing != expectedExecuting && !finishedAsItStarted {
                report(.observers, "observed \(executing); expected \(expectedExecuting)")
            }
            if finishing != expectedFinishing { report(.observers, "observed \(finishing); expected \(expectedFinishing)") }
            if cancelling != expectedCancelling && !(cancelUnknown && cancelling.isEmpty) {
                report(.observers, "observed \(cancelling); expected \(expectedCancelling) (all its changes: \(record.changes); its observer: \(record.observerEvents); final: finished \(final.isFinished), cancelled \(final.isCancelled))")
            }
            // isExecuting turning false is delivered before isFinished turning true.
            if let stop = record.changes.firstIndex(of: Change(property: .isExecuting, old: true, new: false)),
               let finish = record.changes.firstIndex(of: Change(property: .isFinished, old: false, new: true)), stop > finish {
                report(.observers, "isFinished turning true was delivered before isExecuting turning false: \(record.changes)")
            }
        }
        if op.callbacks.contains(.observeFinishFromExecutingHandler) {
            // Executed also if its `didCancel` observer finished it as it started, without a body.
            let executed = ran || (op.kind == .asyncFinishedByDidCancel && !record.nestedFinishChanges.isEmpty)
            let expected = executed && final.isFinished ? [Change(property: .isFinished, old: false, new: true)] : []
            // When another thread is delivering the operation's changes as it starts (its
            // readiness, from the thread that finished its last dependency), that thread delivers
            // the start too, and the finish may be made before the observer is registered (the
            // documented exception to "before the body starts"): it may then hear nothing.
            let missed = record.nestedFinishChanges.isEmpty
            if record.nestedFinishChanges != expected && !missed {
                report(.observers, "an observer of isFinished registered from its isExecuting handler got \(record.nestedFinishChanges); expected \(expected)")
            }
        }
        if let versions = op.dependencyVersions,
           let problem = Self.brokenChain(record.innerDependencies, versions: versions, from: op.helperVersion, registeredLate: !isStaged) {
            report(.observers, "an observer of dependencies registered from a handler: \(problem)")
        }
    }

    /// Why a list of `OpObserver` callbacks is not one the rules allow, or `nil`.
    /// `cancelled`: whether it must have got `didCancel` (`nil`: either way).
    static func malformedObserverEvents(_ events: [ModelObserverEvent], ran: Bool, finished: Bool, cancelled: Bool?) -> String? {
        guard events.first == .attach else { return "didAttach is not first" }
        if events.count(where: { $0 == .attach }) != 1 { return "didAttach more than once" }
        if events.count(where: { $0 == .willExecute }) != (ran ? 1 : 0) { return ran ? "willExecute not once" : "willExecute without running" }
        if events.count(where: { $0 == .didCancel }) > 1 { return "didCancel more than once" }
        if let cancelled, events.contains(.didCancel) != cancelled {
            return cancelled ? "no didCancel" : "didCancel, but it was not cancelled after the observer was attached"
        }
        if finished {
            guard events.suffix(2) == [.willFinish, .didFinish] else { return "does not end with willFinish, didFinish" }
            if events.count(where: { $0 == .willFinish }) != 1 || events.count(where: { $0 == .didFinish }) != 1 { return "finish callbacks not once" }
        } else if events.contains(.willFinish) || events.contains(.didFinish) {
            return "finish callbacks, but it did not finish"
        }
        if let produced = events.firstIndex(where: { if case .didProduce = $0 { true } else { false } }) {
            guard let start = events.firstIndex(of: .willExecute), start < produced else { return "didProduce before willExecute" }
        }
        return nil
    }

    /// Why the changes an observer registered from a handler got do not follow the list's
    /// versions (each change once, in order, from the version it was registered at or the next),
    /// or `nil`.
    ///
    /// With `registeredLate` (interleaved sequences), the handler may run on another thread while
    /// the driver makes more changes: the helper joins the list at a moment the model does not
    /// know, and the observer gets only the changes made after it registered (or none). Its
    /// changes must then follow on from each other and end at the final list.
    static func brokenChain(_ changes: [ModelRecorder.ListChange], versions: [[Int]], from helper: Int?,
                            registeredLate: Bool = false) -> String? {
        guard let helper else {
            return changes.isEmpty ? nil : "it got \(changes.count) changes, but it was never registered"
        }
        if registeredLate {
            let described = changes.map { "\($0.old ?? [])→\($0.new ?? [])" }
            for (change, next) in zip(changes, changes.dropFirst()) where change.new != next.old {
                return "it got \(described): a change does not follow on from the one before"
            }
            if let last = changes.last, let final = versions.last, (last.new ?? []).sorted() != final.sorted() {
                return "it got \(described), which does not end at the final list \(final)"
            }
            return nil
        }
        // The change that added the helper is made in the handler that registers the observer:
        // it may or may not reach it. Every later one must, once, with the right values.
        let expectedFrom = helper
        var candidates: [[ModelRecorder.ListChange]] = []
        for first in [expectedFrom, expectedFrom + 1] where first <= versions.count {
            candidates.append((max(first, 1)..<versions.count).map { ModelRecorder.ListChange(old: versions[$0 - 1], new: versions[$0]) })
        }
        if candidates.contains(changes) { return nil }
        return "it got \(changes.map { "\($0.old ?? [])→\($0.new ?? [])" }); the list went through \(versions)"
    }

    // MARK: Queues

    private func checkQueues(finishers: Set<Int>, mayFinish: Set<Int>, into found: inout [(ModelFailure.Category, String)]) {
        for (index, queue) in model.queues.enumerated() {
            // Width: no more bodies at once than the queue allows.
            if queue.width > 0 {
                let intervals = queue.members.compactMap { id -> (Int, UInt64, UInt64)? in
                    let record = recorder.record(of: id)
                    guard let start = record.starts.first?.stamp, !(model.ops[id]!.startedByHand) else { return nil }
                    return (id, start, record.end ?? .max)
                }
                for (id, start, _) in intervals {
                    let overlapping = intervals.filter { $0.1 <= start && start < $0.2 }
                    if overlapping.count > queue.width {
                        found.append((.width, "queues[\(index)] (width \(queue.width)) ran \(overlapping.map { "op\($0.0)" }.joined(separator: ", ")) at once (when op\(id) started)"))
                        break
                    }
                }
            }
            let members = isStaged ? queue.members : model.interleavedMembers(of: index, added: recorder.addedByBodies)
            let remaining = members.count { !finishers.contains($0) }
            let fewest = members.count { !mayFinish.contains($0) }
            if outcome.operationCounts.indices.contains(index), !(fewest...remaining).contains(outcome.operationCounts[index]) {
                let category: ModelFailure.Category = outcome.operationCounts[index] < fewest ? .outcome : .hang
                found.append((category, "queues[\(index)] holds \(outcome.operationCounts[index]) operations at the end; the model leaves \(fewest == remaining ? "\(remaining)" : "\(fewest) to \(remaining)")"))
            }
            if queue.observesOperationsFromHandler {
                let changes = recorder.innerOperations(of: index)
                for (earlier, later) in zip(changes, changes.dropFirst()) where earlier.new != later.old {
                    found.append((.observers, "an observer of queues[\(index)].operations registered from a handler got \(earlier.old ?? [])→\(earlier.new ?? []) then \(later.old ?? [])→\(later.new ?? [])"))
                    break
                }
                if let last = changes.last, remaining == 0, outcome.operationCounts.indices.contains(index),
                   outcome.operationCounts[index] == 0, last.new != [] {
                    found.append((.observers, "the last change of queues[\(index)].operations an observer registered from a handler got leaves \(last.new ?? []), but the queue is empty"))
                }
            }
        }
    }

    /// Operations of one category never overlap.
    private func checkExclusivity(into found: inout [(ModelFailure.Category, String)]) {
        var byCategory: [Int: [(Int, UInt64, UInt64)]] = [:]
        for (id, op) in model.ops {
            let record = recorder.record(of: id)
            guard let start = record.starts.first?.stamp else { continue }
            for category in op.categories {
                byCategory[category, default: []].append((id, start, record.end ?? .max))
            }
        }
        for (category, intervals) in byCategory.sorted(by: { $0.key < $1.key }) {
            let sorted = intervals.sorted { $0.1 < $1.1 }
            for (earlier, later) in zip(sorted, sorted.dropFirst()) where later.1 < earlier.2 {
                found.append((.exclusivity, "op\(earlier.0) and op\(later.0), both mutuallyExclusive(\"c\(category)\"), ran at the same time"))
            }
        }
    }

    /// On each queue of width 1, in each phase the model can order, the start order is allowed.
    private func checkStartOrders(into found: inout [(ModelFailure.Category, String)]) {
        for snapshot in model.orderSnapshots where snapshot.isDeterminate {
            let started = snapshot.members.keys.compactMap { id -> (Int, UInt64)? in
                guard let start = recorder.record(of: id).starts.first, start.phase == snapshot.phase else { return nil }
                return (id, start.stamp)
            }
            let observed = started.sorted { $0.1 < $1.1 }.map(\.0)
            if let violation = ModelOrderCheck(snapshot: snapshot, observed: observed).violation() {
                found.append((.startOrder, violation))
            }
        }
    }
}
