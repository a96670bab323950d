import Dispatch
import Foundation
import Operations
import Synchronization

/// Plays a normalized ``ModelSequence`` against the library, on a thread of its own (the driver),
/// and records what happens in a ``ModelRecorder``.
///
/// A staged sequence builds everything in suspended queues. At each run phase the driver resumes
/// the queues that run in it, waits until every operation the model says finishes in that phase
/// has finished (its completion block ran), and suspends them again; the last phases leave them
/// running. An interleaved sequence runs its steps against running queues, then resumes every
/// queue and waits for everything that must finish.
final class ModelRunner: @unchecked Sendable {
    // @unchecked Sendable: the driver's state (`queues`, `stepModel`, `failures`, `stopped`) is
    // touched only by the driver thread until `play` reads it after the driver has finished;
    // `step` and `lastProgress` are atomics read by the watchdog.

    /// What a run found before the checks: phases that did not finish, a driver that hung.
    struct Outcome {
        let recorder: ModelRecorder
        /// Failures the runner saw itself, with their category (``ModelFailure/Category``).
        var failures: [(ModelFailure.Category, String)]
        /// Each queue's `operationCount` at the end.
        var operationCounts: [Int]
    }

    let sequence: ModelSequence
    let model: ReferenceModel
    let recorder: ModelRecorder
    /// How long a phase may take before the run is reported stuck.
    let phaseTimeout: Double
    private var queues: [OpQueue] = []
    /// The model as the steps so far left it.
    private var stepModel: ReferenceModel
    private var failures: [(ModelFailure.Category, String)] = []
    private var operationCounts: [Int] = []
    private var stopped = false
    private let step = Atomic<Int>(-1)
    private let lastProgress = Atomic<UInt64>(DispatchTime.now().uptimeNanoseconds)

    init(sequence: ModelSequence, model: ReferenceModel, prefix: String, phaseTimeout: Double) {
        self.sequence = sequence
        self.model = model
        self.recorder = ModelRecorder(prefix: prefix, phaseTimeout: phaseTimeout)
        self.phaseTimeout = phaseTimeout
        self.stepModel = ReferenceModel(mode: sequence.mode, queueWidths: sequence.queueWidths)
    }

    /// Plays the sequence on a new thread; reports a driver stuck in one call of the library for
    /// longer than `phaseTimeout` (the thread is then abandoned).
    func play() -> Outcome {
        let done = ModelLatch()
        let thread = Thread { [self] in
            drive()
            done.open()
        }
        thread.stackSize = 4 << 20
        thread.start()
        while !done.wait(seconds: 0.5) {
            let idle = Double(DispatchTime.now().uptimeNanoseconds - lastProgress.load(ordering: .relaxed)) / 1e9
            if idle > phaseTimeout + 5 {
                let index = step.load(ordering: .relaxed)
                let what = sequence.commands.indices.contains(index) ? "step \(index + 1) (\(sequence.commands[index].swift))" : "the end"
                let failure = (ModelFailure.Category.hang, "the driver has been stuck for \(Int(idle)) s in \(what): a call of the library did not return")
                return Outcome(recorder: recorder, failures: [failure], operationCounts: [])
            }
        }
        return Outcome(recorder: recorder, failures: failures, operationCounts: operationCounts)
    }

    private func progressed() {
        lastProgress.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
    }

    private func op(_ id: Int) -> Op { recorder.operation(id) }

    // MARK: Driving

    private func drive() {
        for (index, width) in sequence.queueWidths.enumerated() {
            let queue = OpQueue()
            queue.name = "\(recorder.prefix)-q\(index)"
            queue.maxConcurrentOperationCount = width
            queue.isSuspended = sequence.mode == .staged
            queues.append(queue)
        }
        recorder.phase = 0
        if sequence.mode == .staged {
            recorder.useChildren(model.ops.filter { $0.value.kind.isGroup }.mapValues(\.children))
        }
        for (index, command) in sequence.commands.enumerated() where !stopped {
            step.store(index, ordering: .relaxed)
            progressed()
            perform(command)
            _ = stepModel.apply(command)
        }
        step.store(sequence.commands.count, ordering: .relaxed)
        if !stopped {
            switch sequence.mode {
            case .staged: finishStaged()
            case .interleaved: finishInterleaved()
            }
        }
        operationCounts = queues.map(\.operationCount)
        if !stopped {
            // A handler that waits steps aside for the events after it: the barriers pass it. Its
            // wait returns once the operation completes, a moment after its queue let it go. One
            // that never returns is reported by the checker.
            _ = waitFor("the waits from callbacks") { recorder.allWaitsReturned }
            // Operations that need not finish may still be on their way when the queues are
            // found settled (a group that starts late, a child that finishes late): the final
            // states are read once nothing has been recorded for a while (a pause, never a
            // verdict: what moves after it is read as it stands, as before).
            if sequence.mode == .interleaved { waitForQuiet() }
            passBarriers()
            // A condition task that started late ends before the records do (one that never
            // ends is reported by the checker, once this gives up).
            _ = waitFor("condition tasks that started late") { recorder.stopRecordingUnlessAConditionTaskRuns() }
        }
        recorder.captureFinalStates()
        cleanUp()
    }

    private func perform(_ command: ModelCommand) {
        switch command {
        case .make(let id, let kind):
            make(id, kind)
        case .enqueue(let ids, let queue):
            let operations = ids.map(op)
            if operations.count == 1 {
                queues[queue].addOperation(operations[0])
            } else {
                queues[queue].addOperations(operations, waitUntilFinished: false)
            }
        case .addChild(let id, let group):
            recorder.noteChild(id, of: group)
            for other in stepModel.heldByCondition(of: id) {
                recorder.noteChild(other, of: group)
            }
            (op(group) as! GroupOp).addChild(op(id))
        case .addDependency(let id, let dependency):
            op(id).addDependency(op(dependency))
        case .removeDependency(let id, let dependency):
            op(id).removeDependency(op(dependency))
        case .fan(let on, let first, let count, let queue):
            for id in first..<first + count {
                make(id, .sync)
                op(id).addDependency(op(on))
            }
            queues[queue].addOperations((first..<first + count).map(op), waitUntilFinished: false)
        case .setPriority(let id, let priority):
            op(id).queuePriority = priority.library
        case .priorityStorm(let id, let changes):
            let operation = op(id)
            let original = operation.queuePriority
            let partner = ModelPriority(rawValue: original.rawValue)!.stormPartner.library
            for change in 0..<changes {
                operation.queuePriority = change % 2 == 0 ? partner : original
            }
        case .cancel(let id):
            op(id).cancel()
        case .cancelWithError(let id):
            op(id).cancel(with: ModelWorkError.cancelled)
        case .addCondition(let id, let condition):
            op(id).addCondition(libraryCondition(condition, of: id))
        case .observe(let id):
            observe(id)
        case .observeDependenciesFromHandler(let id):
            observeDependenciesFromHandler(id)
        case .observeOperationsFromHandler(let queue):
            observeOperationsFromHandler(queue)
        case .onRun(let id, let action):
            recorder.addBodyAction(id, action)
        case .onCallback(let id, let callback):
            addCallback(callback, to: id)
        case .startByHand(let id):
            op(id).start()
            if !waitFor("op\(id), started by hand, to complete", { self.recorder.completions(of: id) > 0 }) {
                fail(.hang, "op\(id), started by hand, did not finish (its completion block never ran)")
            }
        case .runUntilQuiet:
            runPhase(stepModel.phase, active: Set(queues.indices.filter { !stepModel.queues[$0].keptSuspended }), quiet: true)
        case .keepSuspended:
            break
        case .suspend(let queue):
            queues[queue].isSuspended = true
        case .resume(let queue):
            queues[queue].isSuspended = false
        case .pause(let microseconds):
            if microseconds > 0 { usleep(UInt32(microseconds)) }
        }
    }

    private func make(_ id: Int, _ kind: ModelOpKind) {
        let operation: Op
        switch kind {
        case .sync:
            operation = ModelSyncOp(id: id, recorder: recorder)
        case .blocks:
            let block = BlockOp()
            let pair = ModelBlockPair()
            let recorder = self.recorder
            for _ in 0..<2 {
                block.addExecutionBlock { [weak block] in
                    guard let block else { return }
                    if pair.enter() { recorder.bodyStarts(block, id: id) }
                    if pair.leave() { recorder.bodyEnds(id) }
                }
            }
            operation = block
        case .asyncInline, .asyncOtherThread, .asyncThrowing, .asyncFinishedByDidCancel:
            operation = ModelAsyncOp(id: id, recorder: recorder, kind: kind)
        case .asyncBody:
            operation = ModelAsyncBodyOp(id: id, recorder: recorder)
        case .group, .groupWithTail:
            operation = ModelGroupOp(id: id, recorder: recorder, signalsAfterExecute: kind == .groupWithTail)
        }
        operation.name = "\(recorder.prefix)-op\(id)"
        recorder.register(operation, id: id)
        let recorder = self.recorder
        operation.completionBlock = { [weak operation] in
            recorder.completed(id, operation)
        }
    }

    private func libraryCondition(_ condition: ModelConditionSpec, of id: Int) -> OpCondition {
        let recorder = self.recorder
        switch condition {
        case .predicate(let value):
            return .predicate(value ? "pass" : "fail") { _ in value }
        case .evaluate(let value):
            return .evaluate(value ? "asyncPass" : "asyncFail") { _ in
                await Task.yield()
                return value
            }
        case .evaluateThrows:
            return .evaluate("asyncThrows") { _ in
                await Task.yield()
                throw ModelWorkError.thrown
            }
        case .noFailedDependencies:
            return .noFailedDependencies
        case .noCancelledDependencies:
            return .noCancelledDependencies
        case .exclusive(let category):
            return .mutuallyExclusive("\(recorder.prefix)-c\(category)")
        case .dependency(let other):
            return .dependency(op(other))
        case .not(let value):
            return .not(.predicate("inner") { _ in value })
        case .any(let first, let second):
            return .any([.predicate("a") { _ in first }, .predicate("b") { _ in second }])
        case .cancelsItsOperation:
            return .evaluate("cancelsItsOperation") { operation in
                operation.cancel()
                return true
            }
        case .cancelsItsOperationAndWaits:
            // A check that waits until it is told to stop (a "wait until reachable" check): its
            // operation's cancellation must reach its task (issue 22, defect 18). The deadline only
            // guards against a hang.
            return .evaluate("waitsForCancellation") { operation in
                recorder.update(id) { $0.conditionTaskStarted = true }
                operation.cancel()
                let deadline = ContinuousClock.now + .seconds(30)
                while !Task.isCancelled && ContinuousClock.now < deadline {
                    try? await Task.sleep(for: .milliseconds(1))
                }
                let sawCancellation = Task.isCancelled
                recorder.update(id) {
                    $0.conditionTaskEnded = true
                    $0.conditionTaskSawCancellation = sawCancellation
                }
                return true
            }
        }
    }

    // MARK: Observers

    /// Registers the operation's barrier observer (once): see ``ModelRecorder/passBarrier(of:)``.
    private func addBarrier(to id: Int) {
        guard recorder.barrierCount(of: id) == nil else { return }
        let recorder = self.recorder
        recorder.passBarrier(of: id)
        recorder.keep(op(id).observe(\.queuePriority) { _, _ in recorder.passBarrier(of: id) })
    }

    /// Waits until every change made before now has been delivered to the observers of the
    /// operations and queues that have them: a change made now is delivered after them.
    private func passBarriers() {
        for id in recorder.operationsWithBarriers {
            let count = recorder.barrierCount(of: id) ?? 0
            let operation = op(id)
            operation.queuePriority = operation.queuePriority == .veryLow ? .veryHigh : .veryLow
            _ = waitFor("the observers of op\(id)") { (recorder.barrierCount(of: id) ?? 0) > count }
        }
        for queue in recorder.queuesWithBarriers {
            let count = recorder.queueBarrierCount(of: queue) ?? 0
            queues[queue].name = (queues[queue].name ?? "") + "."
            _ = waitFor("the observers of queues[\(queue)]") { (recorder.queueBarrierCount(of: queue) ?? 0) > count }
        }
    }

    private func observe(_ id: Int) {
        addBarrier(to: id)
        let recorder = self.recorder
        let operation = op(id)
        operation.addObserver(BlockObserver(
            didAttach: { _ in recorder.update(id) { $0.observerEvents.append(.attach) } },
            willExecute: { _ in recorder.update(id) { $0.observerEvents.append(.willExecute) } },
            didCancel: { _, _ in recorder.update(id) { $0.observerEvents.append(.didCancel) } },
            willFinish: { _, _ in recorder.update(id) { $0.observerEvents.append(.willFinish) } },
            didFinish: { _, error in
                let kind = ModelErrorKind(error)
                recorder.update(id) {
                    $0.observerEvents.append(.didFinish)
                    $0.didFinishErrors.append(kind)
                }
            },
            didProduce: { _, produced in
                let producedID = recorder.id(of: produced)
                recorder.update(id) { $0.observerEvents.append(.didProduce(producedID)) }
            }
        ))
        let properties: [(KeyPath<Op, Bool>, ModelRecorder.Change.Property)] = [
            (\.isExecuting, .isExecuting), (\.isFinished, .isFinished), (\.isCancelled, .isCancelled),
        ]
        for (keyPath, property) in properties {
            recorder.keep(operation.observe(keyPath, options: [.old, .new]) { _, change in
                recorder.update(id) { $0.changes.append(ModelRecorder.Change(property: property, old: change.oldValue, new: change.newValue)) }
            })
        }
    }

    private func observeDependenciesFromHandler(_ id: Int) {
        addBarrier(to: id)
        let recorder = self.recorder
        let helper = BlockOp {}
        helper.name = "\(recorder.prefix)-helper\(id)"
        helper.start()
        recorder.registerHelper(helper)
        let fired = Atomic<Bool>(false)
        // Issue 22, defect 4: a change made in a handler and an observer with values registered
        // there, before that change is delivered.
        recorder.keep(op(id).observe(\.dependencies) { operation, _ in
            guard !fired.exchange(true, ordering: .acquiringAndReleasing) else { return }
            operation.addDependency(helper)
            recorder.keep(operation.observe(\.dependencies, options: [.old, .new]) { _, change in
                let listChange = ModelRecorder.ListChange(old: recorder.ids(of: change.oldValue), new: recorder.ids(of: change.newValue))
                recorder.update(id) { $0.innerDependencies.append(listChange) }
            })
        })
    }

    private func observeOperationsFromHandler(_ queue: Int) {
        let recorder = self.recorder
        if recorder.queueBarrierCount(of: queue) == nil {
            recorder.passQueueBarrier(of: queue)
            recorder.keep(queues[queue].observe(\.name) { _, _ in recorder.passQueueBarrier(of: queue) })
        }
        let fired = Atomic<Bool>(false)
        recorder.keep(queues[queue].observe(\.operations) { observed, _ in
            guard !fired.exchange(true, ordering: .acquiringAndReleasing) else { return }
            recorder.keep(observed.observe(\.operations, options: [.old, .new]) { _, change in
                recorder.noteInnerOperations(of: queue, ModelRecorder.ListChange(
                    old: recorder.ids(of: change.oldValue), new: recorder.ids(of: change.newValue)))
            })
        })
    }

    private func addCallback(_ callback: ModelCallback, to id: Int) {
        addBarrier(to: id)
        let recorder = self.recorder
        let operation = op(id)
        recorder.addCallback(id, callback)
        switch callback {
        case .completionWaits:
            break   // the completion block reads it
        case .isFinishedObserverWaits:
            recorder.keep(operation.observe(\.isFinished, options: [.new]) { operation, change in
                guard change.newValue == true else { return }
                recorder.update(id) { $0.waitsBegun += 1 }
                operation.waitUntilFinished()
                recorder.update(id) { $0.waitsReturned += 1 }
            })
        case .didFinishWaits:
            operation.addObserver(BlockObserver(didFinish: { operation, _ in
                recorder.update(id) { $0.waitsBegun += 1 }
                operation.waitUntilFinished()
                recorder.update(id) { $0.waitsReturned += 1 }
            }))
        case .cancelInWillExecute:
            operation.addObserver(BlockObserver(willExecute: { $0.cancel() }))
        case .observeFinishFromExecutingHandler:
            recorder.keep(operation.observe(\.isExecuting, options: [.new]) { operation, change in
                guard change.newValue == true else { return }
                recorder.keep(operation.observe(\.isFinished, options: [.old, .new]) { _, change in
                    recorder.update(id) {
                        $0.nestedFinishChanges.append(ModelRecorder.Change(property: .isFinished, old: change.oldValue, new: change.newValue))
                    }
                })
            })
        }
    }

    // MARK: Phases

    private func fail(_ category: ModelFailure.Category, _ message: String) {
        failures.append((category, message))
        stopped = true
    }

    /// Polls `condition` until it holds or the phase timeout passes.
    /// Waits until nothing is recorded for three polls 2 ms apart (at most ``phaseTimeout``).
    private func waitForQuiet() {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(phaseTimeout * 1e9)
        var last = recorder.activity
        var still = 0
        while still < 3 && DispatchTime.now().uptimeNanoseconds < deadline {
            usleep(2_000)
            let now = recorder.activity
            still = now == last ? still + 1 : 0
            last = now
        }
    }

    private func waitFor(_ what: String, _ condition: () -> Bool) -> Bool {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(phaseTimeout * 1e9)
        var pause: UInt32 = 50
        while !condition() {
            if DispatchTime.now().uptimeNanoseconds > deadline { return false }
            usleep(pause)
            pause = min(pause * 2, 2_000)
        }
        return true
    }

    /// Runs the queues in `active` until every operation the model finishes in `phase` has
    /// completed; suspends them again if `quiet`.
    private func runPhase(_ phase: Int, active: Set<Int>, quiet: Bool) {
        recorder.phase = phase
        progressed()
        for queue in active.sorted() { queues[queue].isSuspended = false }
        let expected = model.ops.keys.sorted().filter { model.ops[$0]!.finishPhase == phase }
        // A group may start in the phase and never finish (a child waits for ever).
        let starting = model.ops.keys.sorted().filter { model.ops[$0]!.ran && model.ops[$0]!.runPhase == phase }
        let waiting = expected.filter { model.ops[$0]!.conditionWaitsForCancellation }
        let finished = waitFor("phase \(phase)") {
            expected.allSatisfy { recorder.completions(of: $0) > 0 }
                && starting.allSatisfy { !recorder.record(of: $0).starts.isEmpty }
        }
        if !finished {
            let missing = expected.filter { recorder.completions(of: $0) == 0 }
            let unstarted = starting.filter { recorder.record(of: $0).starts.isEmpty && !missing.contains($0) }
            let what = missing.isEmpty ? "" : "\(missing.map { "op\($0)" }.joined(separator: ", ")) did not finish"
            let other = unstarted.isEmpty ? "" : (what.isEmpty ? "" : "; ") + "\(unstarted.map { "op\($0)" }.joined(separator: ", ")) did not start"
            fail(.hang, "phase \(phase): \(what)\(other) within \(Int(phaseTimeout)) s (the model runs them in this phase)")
            return
        }
        let conditionsEnded = waitFor("condition tasks") {
            waiting.allSatisfy { recorder.record(of: $0).conditionTaskEnded }
        }
        if !conditionsEnded {
            let missing = waiting.filter { !recorder.record(of: $0).conditionTaskEnded }
            fail(.hang, "phase \(phase): the condition task of \(missing.map { "op\($0)" }.joined(separator: ", ")) was still running \(Int(phaseTimeout)) s after its operation was cancelled: the cancellation did not reach it")
            return
        }
        if quiet {
            for queue in active.sorted() { queues[queue].isSuspended = true }
            // The steps that follow belong to the next phase (a start by hand, say).
            recorder.phase = phase + 1
        }
        progressed()
    }

    private func finishStaged() {
        let all = Set(queues.indices)
        let kept = Set(queues.indices.filter { stepModel.queues[$0].keptSuspended })
        var phase = stepModel.phase
        runPhase(phase, active: all.subtracting(kept), quiet: false)
        if !kept.isEmpty && !stopped {
            phase += 1
            runPhase(phase, active: all, quiet: false)
        }
        guard !stopped else { return }
        let remaining = queues.indices.map { queue in
            model.queues[queue].members.count { model.ops[$0]!.finishPhase == nil }
        }
        // At most the operations that never finish stay (the checker compares exactly).
        if !waitFor("the queues to empty", { queues.indices.allSatisfy { queues[$0].operationCount <= remaining[$0] } }) {
            let counts = queues.indices.map { "queues[\($0)]: \(queues[$0].operationCount) (expected \(remaining[$0]))" }
            fail(.hang, "the queues did not empty: \(counts.joined(separator: ", "))")
        }
    }

    private func finishInterleaved() {
        recorder.phase = 1
        for queue in queues { queue.isSuspended = false }
        // What must finish depends on what bodies did (added or cancelled operations): it is
        // worked out again whenever that changes, until everything it names has finished.
        var expected: Set<Int> = []
        while true {
            let added = recorder.addedByBodies
            let cancelled = recorder.cancelledByBodies
            expected = model.interleavedFinishers(added: added, cancelledByBodies: cancelled)
            progressed()
            let settled = waitFor("everything") {
                expected.allSatisfy { recorder.completions(of: $0) > 0 }
                    || recorder.addedByBodies != added || recorder.cancelledByBodies != cancelled
            }
            if recorder.addedByBodies != added || recorder.cancelledByBodies != cancelled { continue }
            if !settled {
                let missing = expected.sorted().filter { recorder.completions(of: $0) == 0 }
                fail(.hang, "\(missing.map { "op\($0)" }.joined(separator: ", ")) did not finish within \(Int(phaseTimeout)) s of the queues resuming")
                return
            }
            break
        }
        // Every such task, not only those of operations that must finish: one that ends late
        // finishes its (cancelled) operation after the final states were read.
        let waiting = model.ops.keys.filter { model.ops[$0]!.conditions.contains(.cancelsItsOperationAndWaits) }
        let conditionsEnded = waitFor("condition tasks") {
            waiting.allSatisfy { id in
                let record = recorder.record(of: id)
                return !record.conditionTaskStarted || record.conditionTaskEnded
            }
        }
        if !conditionsEnded {
            fail(.hang, "the condition task of an operation was still running \(Int(phaseTimeout)) s after its operation was cancelled: the cancellation did not reach it")
            return
        }
        // Operations that may finish (a late dependency did not hold them back) settle too: no
        // body runs (a group may wait for children that never finish), and no completion block is
        // left to run.
        _ = waitFor("everything to settle") {
            recorder.allOperations.values.allSatisfy { operation in
                let id = recorder.id(of: operation)
                // A cancelled operation whose condition's task ended finishes next.
                let finishesNext = recorder.record(of: id).conditionTaskEnded && operation.isCancelled
                return (!operation.isExecuting || operation is GroupOp)
                    && (!operation.isFinished || recorder.completions(of: id) > 0)
                    && (!finishesNext || (operation.isFinished && recorder.completions(of: id) > 0))
            }
        }
        // At most the operations that need not finish stay (see `ModelChecker`).
        let remaining = queues.indices.map { queue in
            model.interleavedMembers(of: queue, added: recorder.addedByBodies).count { !expected.contains($0) }
        }
        if !waitFor("the queues to empty", { queues.indices.allSatisfy { queues[$0].operationCount <= remaining[$0] } }) {
            let counts = queues.indices.map { "queues[\($0)]: \(queues[$0].operationCount) (at most \(remaining[$0]))" }
            fail(.hang, "the queues did not empty: \(counts.joined(separator: ", "))")
        }
        progressed()
    }

    /// Lets everything left go: observers stop recording, unfinished operations are cancelled
    /// and their queues resumed, so that nothing of this run lingers into the next.
    private func cleanUp() {
        recorder.invalidateObservations()
        for (_, operation) in recorder.allOperations where !operation.isFinished {
            operation.cancel()
        }
        for queue in queues { queue.isSuspended = false }
    }
}
