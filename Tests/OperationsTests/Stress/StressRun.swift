import Dispatch
import Synchronization
@testable import Operations

/// One execution of a ``StressScenario``: its queues, its recorder, and the bodies of its
/// operations.
///
/// Operations and their closures hold the run strongly; the run holds operations only weakly,
/// so that the harness can check that finished operations are released.
final class StressRun: Sendable {
    let scenario: StressScenario
    let config: StressConfig
    let recorder: StressRecorder
    let queues: [OpQueue]
    let references: [WeakOpBox]
    /// The prefix of the operations' names, unique to the run, so that the run can pick its own
    /// reports out of `DiagnosticsRecorder.shared`.
    let token = uniqueToken("stress")
    /// Observation tokens, kept until the run is over.
    let tokens = LockedBox<[ObservationToken]>([])
    /// Entered when an operation (or barrier) is created, left when it is finished for good.
    let pending = DispatchGroup()
    private let finisherQueue = DispatchQueue(label: "stress.finisher")

    init(scenario: StressScenario, config: StressConfig) {
        self.scenario = scenario
        self.config = config
        recorder = StressRecorder(nodeCount: scenario.nodes.count, widths: scenario.queues.map(\.width))
        queues = scenario.queues.enumerated().map { index, plan in
            StressReporting.queue(named: "stress.q\(index)", width: plan.width, startsSuspended: plan.startsSuspended)
        }
        references = scenario.nodes.map { _ in WeakOpBox() }
    }

    // MARK: Names

    /// The name of the operation (or barrier) of `id`.
    func name(of id: Int) -> String {
        "\(token).n\(id)"
    }

    /// The node id in an operation's description, like `StressSyncOp "stress123.n12"`, if the
    /// operation belongs to this run.
    func nodeID(in description: String) -> Int? {
        guard let range = description.firstRange(of: "\"\(token).n") else { return nil }
        return Int(description[range.upperBound...].prefix { $0.isNumber })
    }

    // MARK: Creating and adding operations

    /// Creates the operation of `id` with its observers, completion block and end waiter (but not
    /// its dependencies).
    func makeOperation(_ id: Int) -> Op {
        let node = scenario.nodes[id]
        let operation: Op
        switch node.kind {
        case .sync:
            operation = StressSyncOp(run: self, node: id)
        case .async:
            operation = StressAsyncOp(run: self, node: id)
        case .invocation:
            operation = InvocationOp<Int> { [self] in
                invocationBody(of: id)
                return id
            }
        case .block(let count):
            let block = BlockOp()
            for index in 0..<count {
                block.addExecutionBlock { [self] in blockBody(of: id, index: index) }
            }
            operation = block
        case .barrier:
            preconditionFailure("barriers are added with addBarrierBlock")
        }
        operation.name = name(of: id)
        operation.queuePriority = node.priority
        recorder.update(id) { $0.created = true }
        if node.isObserved {
            observe(operation, id)
        }
        if node.hasCompletionBlock {
            operation.completionBlock = { [self] in completionBlock(of: id) }
        }
        pending.enter()
        registerEnd(of: operation, id)
        // Published last: the driver may cancel a child as soon as it finds it here, and its
        // observers must see that.
        references[id].set(operation)
        return operation
    }

    /// Adds operations to queue `queue` with one `addOperations` call, recording the order.
    func add(_ entries: [(id: Int, operation: Op)], to queue: Int) {
        let trace = recorder.queues[queue]
        trace.additionLock.withLock {
            queues[queue].addOperations(entries.map(\.operation), waitUntilFinished: false)
            let stamp = recorder.stamp()
            let lastBarrier = trace.additions.withLockedValue { state in
                state.order.append(contentsOf: entries.map(\.id))
                return state.lastBarrier
            }
            for entry in entries {
                recorder.update(entry.id) {
                    $0.addStamp = stamp
                    $0.barrierBefore = lastBarrier
                }
            }
        }
    }

    /// Adds the barrier node `id` with `addBarrierBlock`.
    func addBarrier(_ id: Int) {
        let queueIndex = scenario.nodes[id].queue
        let queue = queues[queueIndex]
        let trace = recorder.queues[queueIndex]
        trace.additionLock.withLock {
            pending.enter()
            recorder.update(id) { $0.created = true }
            queue.addBarrierBlock { [self] in barrierBody(of: id) }
            let stamp = recorder.stamp()
            let previousBarrier = trace.additions.withLockedValue { state in
                let previous = state.lastBarrier
                state.order.append(id)
                state.lastBarrier = id
                return previous
            }
            recorder.update(id) {
                $0.addStamp = stamp
                $0.barrierBefore = previousBarrier
            }
            // Nothing was added after the barrier (the addition lock is held): it is the last
            // member, unless it already ran and left, in which case its block registered it.
            // The membership is the queue's state: read under its lock (a drainer may be
            // removing a member meanwhile, which writes the same field).
            if let barrier = queue.operations.last, queue.withLock({ barrier.membership.isBarrier }) {
                barrier.name = name(of: id)
                references[id].set(barrier)
                registerEnd(of: barrier, id)
            }
        }
    }

    /// Cancels the operation of `id` if it exists, noting that it may be cancelled from now on.
    func cancel(_ id: Int) {
        guard let operation = references[id].operation else { return }
        recorder.noteCancellation(of: id, at: recorder.stamp())
        operation.cancel()
    }

    /// Cancels every operation of `queue`.
    func cancelAll(in queue: Int) {
        let trace = recorder.queues[queue]
        trace.additionLock.withLock {
            let stamp = recorder.stamp()
            for id in trace.additions.withLockedValue({ $0.order }) {
                recorder.noteCancellation(of: id, at: stamp)
            }
            queues[queue].cancelAllOperations()
        }
    }

    /// Registers the waiter that records the end of `id` (once, whoever calls first).
    private func registerEnd(of operation: Op, _ id: Int) {
        guard !recorder.traces[id].isRegistered.exchange(true, ordering: .acquiringAndReleasing) else { return }
        operation.onCompletion { [self] in finishedForGood(id) }
    }

    private func finishedForGood(_ id: Int) {
        recorder.callback {
            let stamp = recorder.stamp()
            let final = references[id].operation.map { operation in
                let error = operation.error
                return StressRecorder.Final(
                    isFinished: operation.isFinished,
                    isCancelled: operation.isCancelled,
                    isExecuting: operation.isExecuting,
                    cycleError: error as? DependencyCycleError,
                    hasOtherError: error != nil && !(error is DependencyCycleError),
                    invocationResult: (operation as? InvocationOp<Int>).flatMap { try? $0.result })
            }
            recorder.update(id) {
                $0.leftStamps.append(stamp)
                if let final { $0.final = final }
            }
        }
        pending.leave()
    }

    // MARK: Observers and completion blocks

    private func observe(_ operation: Op, _ id: Int) {
        let created = [
            operation.observe(\.isExecuting, options: [.old, .new]) { [self] _, change in
                observed(id, .isExecuting, change)
            },
            operation.observe(\.isCancelled, options: [.old, .new]) { [self] _, change in
                observed(id, .isCancelled, change)
            },
            operation.observe(\.isFinished, options: [.old, .new]) { [self] _, change in
                observed(id, .isFinished, change)
            },
        ]
        tokens.withLockedValue { $0.append(contentsOf: created) }
    }

    private func observed(_ id: Int, _ property: StressRecorder.Observed.Property, _ change: ObservedChange<Bool>) {
        recorder.callback {
            let event = StressRecorder.Observed(property: property, old: change.oldValue, new: change.newValue)
            recorder.update(id) { $0.observed.append(event) }
        }
    }

    private func completionBlock(of id: Int) {
        recorder.callback {
            let start = recorder.stamp()
            recorder.update(id) { $0.completionStarts.append(start) }
            StressRun.pause(scenario.nodes[id].pause)
            let end = recorder.stamp()
            recorder.update(id) { $0.completionEnds.append(end) }
        }
    }

    // MARK: Bodies

    func syncBody(of id: Int, operation: Op) {
        recorder.callback {
            let node = scenario.nodes[id]
            bodyStarted(id, operation: operation, checksCurrentQueue: true)
            StressRun.pause(node.pause)
            addChild(of: id, parent: operation)
            if node.cancellation == .duringExecution {
                cancelFromAnotherThread(operation, id)
            }
            bodyEnded(id)
        }
    }

    func asyncExecute(of id: Int, operation: StressAsyncOp) {
        let node = scenario.nodes[id]
        guard case .async(let finisher) = node.kind else {
            preconditionFailure("n\(id) is not asynchronous")
        }
        recorder.callback {
            bodyStarted(id, operation: operation, checksCurrentQueue: true)
            addChild(of: id, parent: operation)
        }
        let work: @Sendable () -> Void = { [self] in
            recorder.callback {
                StressRun.pause(node.pause)
                cancelIfPlanned(id, operation: operation)
                bodyEnded(id)
                operation.finish()
            }
        }
        switch finisher {
        case .inline:
            work()
        case .global:
            DispatchQueue.global().async(execute: work)
        case .globalAfter(let microseconds):
            DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(microseconds), execute: work)
        case .serialQueue:
            finisherQueue.async(execute: work)
        case .asyncBody:
            preconditionFailure("n\(id) runs as an async body")
        }
    }

    /// Whether node `id` is an asynchronous operation whose work is its `async` body.
    func runsAsAsyncBody(_ id: Int) -> Bool {
        scenario.nodes[id].kind == .async(.asyncBody)
    }

    /// The `async` body of an asynchronous operation: the same work, in a `Task`; the library
    /// finishes the operation when it returns.
    func asyncBody(of id: Int, operation: StressAsyncOp) async {
        let node = scenario.nodes[id]
        recorder.callback {
            bodyStarted(id, operation: operation, checksCurrentQueue: true)
            addChild(of: id, parent: operation)
        }
        await Task.yield()
        recorder.callback {
            StressRun.pause(node.pause)
            if cancelIfPlanned(id, operation: operation), !Task.isCancelled {
                recorder.violation("n\(id): cancelling the operation did not cancel the task of its async body")
            }
            bodyEnded(id)
        }
    }

    /// Cancels the asynchronous operation of node `id` from its own work if its plan says so, and
    /// checks that the cancellation is visible at once. Returns whether it cancelled.
    @discardableResult
    private func cancelIfPlanned(_ id: Int, operation: StressAsyncOp) -> Bool {
        guard scenario.nodes[id].cancellation == .duringExecution else { return false }
        recorder.noteCancellation(of: id, at: recorder.stamp())
        operation.cancel()
        if !operation.isCancelled {
            recorder.violation("n\(id): isCancelled is false right after cancel() during execution")
        }
        return true
    }

    private func invocationBody(of id: Int) {
        recorder.callback {
            guard let operation = references[id].operation else {
                recorder.violation("n\(id): the invocation runs but its operation is gone")
                return
            }
            bodyStarted(id, operation: operation, checksCurrentQueue: true)
            StressRun.pause(scenario.nodes[id].pause)
            bodyEnded(id)
        }
    }

    private func blockBody(of id: Int, index: Int) {
        recorder.callback {
            let node = scenario.nodes[id]
            guard case .block(let count) = node.kind else { return }
            let queue = recorder.queues[node.queue]
            let start = recorder.stamp()
            // The operation is in flight while any of its blocks runs; counting under its lock
            // keeps two blocks from counting it twice.
            recorder.update(id) { record in
                record.bodyStarts.append(start)
                if recorder.traces[id].activeBlocks.add(1, ordering: .relaxed).newValue == 1 { queue.enter() }
            }
            if index == 0, let operation = references[id].operation {
                // Only a single block runs on the queue's own thread (with OpQueue.current set).
                checkStart(id, operation: operation, checksCurrentQueue: count == 1)
            }
            StressRun.pause(node.pause)
            let end = recorder.stamp()
            recorder.update(id) { record in
                record.bodyEnds.append(end)
                if recorder.traces[id].activeBlocks.subtract(1, ordering: .relaxed).newValue == 0 { queue.leave() }
            }
        }
    }

    private func barrierBody(of id: Int) {
        recorder.callback {
            let queueIndex = scenario.nodes[id].queue
            let start = recorder.stamp()
            recorder.queues[queueIndex].enter()
            recorder.update(id) { $0.bodyStarts.append(start) }
            if let barrier = ThreadContext.operation {
                references[id].set(barrier)
                registerEnd(of: barrier, id)
                if !queues[queueIndex].withLock({ barrier.membership.isBarrier }) || !barrier.isExecuting {
                    recorder.violation("n\(id): the barrier block runs in \(barrier), which is not an executing barrier")
                }
                if let first = queues[queueIndex].operations.first, first !== barrier {
                    recorder.violation("n\(id): the barrier started while \(first), added before it, is still in the queue")
                }
            } else {
                recorder.violation("n\(id): the barrier block runs outside an operation")
            }
            if OpQueue.current !== queues[queueIndex] {
                recorder.violation("n\(id): the barrier runs with OpQueue.current = \(OpQueue.current.map(\.description) ?? "nil")")
            }
            recorder.queues[queueIndex].leave()
            let end = recorder.stamp()
            recorder.update(id) { $0.bodyEnds.append(end) }
        }
    }

    // MARK: Body helpers

    private func bodyStarted(_ id: Int, operation: Op, checksCurrentQueue: Bool) {
        let start = recorder.stamp()
        recorder.queues[scenario.nodes[id].queue].enter()
        recorder.update(id) { $0.bodyStarts.append(start) }
        checkStart(id, operation: operation, checksCurrentQueue: checksCurrentQueue)
    }

    private func bodyEnded(_ id: Int) {
        recorder.queues[scenario.nodes[id].queue].leave()
        let end = recorder.stamp()
        recorder.update(id) { $0.bodyEnds.append(end) }
    }

    /// Checks made as a body starts: the operation is executing, every dependency has finished,
    /// and it runs on behalf of its own queue.
    private func checkStart(_ id: Int, operation: Op, checksCurrentQueue: Bool) {
        if !operation.isExecuting || operation.isFinished {
            recorder.violation("n\(id): body runs with isExecuting \(operation.isExecuting), isFinished \(operation.isFinished)")
        }
        for dependency in operation.dependencies where !dependency.isFinished {
            recorder.violation("n\(id): body started before its dependency \(dependency) finished")
        }
        if checksCurrentQueue {
            let expected = queues[scenario.nodes[id].queue]
            if OpQueue.current !== expected {
                recorder.violation("n\(id): runs with OpQueue.current = \(OpQueue.current.map(\.description) ?? "nil"), expected \(expected)")
            }
            if (ThreadContext.operation ?? Op.currentTaskOperation) !== operation {
                recorder.violation("n\(id): the current operation is not itself")
            }
        }
    }

    /// Creates the child of `id` and adds it to `OpQueue.current`, which must be `id`'s queue.
    private func addChild(of id: Int, parent: Op) {
        guard let childID = scenario.nodes[id].child else { return }
        let child = makeOperation(childID)
        if scenario.nodes[childID].dependsOnParent {
            child.addDependency(parent)
        }
        let queueIndex = scenario.nodes[id].queue
        if OpQueue.current !== queues[queueIndex] {
            recorder.violation("n\(id): OpQueue.current is not its queue when adding child n\(childID)")
        }
        add([(childID, child)], to: queueIndex)
    }

    /// Cancels `operation` from another thread while its body runs, and checks that the body
    /// sees it.
    private func cancelFromAnotherThread(_ operation: Op, _ id: Int) {
        recorder.noteCancellation(of: id, at: recorder.stamp())
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            operation.cancel()
            done.signal()
        }
        if done.wait(timeout: .now() + .seconds(config.hangTimeoutSeconds)) == .timedOut {
            recorder.violation("n\(id): cancel() from another thread did not return (hang)")
        } else if !operation.isCancelled {
            recorder.violation("n\(id): the body does not see the cancellation made during its execution")
        }
    }

    /// Spins or blocks the calling thread for a few microseconds.
    static func pause(_ pause: StressScenario.Pause) {
        switch pause {
        case .none:
            return
        case .spin(let microseconds):
            let until = DispatchTime.now().uptimeNanoseconds + UInt64(microseconds) * 1_000
            while DispatchTime.now().uptimeNanoseconds < until {}
        case .block(let microseconds):
            _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .microseconds(microseconds))
        }
    }
}
