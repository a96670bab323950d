import Dispatch
@testable import Operations

/// Runs a ``StressScenario`` and checks it: the driver creates and adds the operations following
/// the script, adds the back edges of a cycle scenario, resumes every queue, waits (with a hang
/// guard; in a cycle scenario, waiting for the queues is what ends the cycles), then hands the
/// records to ``InvariantChecker`` and checks that every operation was released and no scenario
/// thread is left.
enum StressHarness {
    /// The result of one run.
    struct Outcome {
        let seed: UInt64
        /// Operations and barriers created.
        let operationCount: Int
        let violations: [String]
        /// Whether the run did not finish within the hang guard.
        let hung: Bool
        /// Dependency cycles ended (cycle scenarios).
        var cycleCount = 0
        /// What the run exercised (see ``InvariantChecker/statistics()``).
        var statistics: [String: Int] = [:]
    }

    /// Runs `scenario`.
    static func run(_ scenario: StressScenario, config: StressConfig) -> Outcome {
        let run = StressRun(scenario: scenario, config: config)
        var violations: [String] = []
        var operations: [Op?] = Array(repeating: nil, count: scenario.nodes.count)
        var dependencies = scenario.nodes.map { node in
            node.dependsOnParent ? [node.parent!] : node.dependencies
        }

        for step in scenario.steps {
            switch step {
            case .add(let ids, let queue):
                var entries: [(id: Int, operation: Op)] = []
                for id in ids {
                    let node = scenario.nodes[id]
                    let operation = run.makeOperation(id)
                    for dependency in node.dependencies {
                        operation.addDependency(operations[dependency]!)
                    }
                    if node.cancellation == .beforeAdding {
                        run.recorder.noteCancellation(of: id, at: run.recorder.stamp())
                        operation.cancel()
                    }
                    operations[id] = operation
                    entries.append((id, operation))
                }
                run.add(entries, to: queue)
            case .addBarrier(let id):
                run.addBarrier(id)
            case .suspend(let queue):
                run.queues[queue].isSuspended = true
            case .resume(let queue):
                run.queues[queue].isSuspended = false
            case .cancel(let id):
                run.cancel(id)
            case .cancelAll(let queue):
                run.cancelAll(in: queue)
            case .pause(let microseconds):
                StressRun.pause(.spin(microseconds: microseconds))
            }
        }

        if !scenario.backEdges.isEmpty {
            _ = DiagnosticsRecorder.shared   // installed before the first cycle can be reported
            applyBackEdges(scenario, run: run, operations: operations, dependencies: &dependencies, violations: &violations)
        }

        // Operations on a dependency cycle are ended after this, by the waits below.
        let resumed = run.recorder.stamp()
        for queue in run.queues {
            queue.isSuspended = false
        }
        if !scenario.backEdges.isEmpty {
            // Waiting for a queue ends the cycles that hold it back (in a helper thread: a hang is
            // reported by the wait below).
            let queues = run.queues
            DispatchQueue.global().async {
                for queue in queues { queue.waitUntilAllOperationsAreFinished() }
            }
        }
        let finished = run.pending.wait(timeout: .now() + .seconds(config.hangTimeoutSeconds)) == .success
        if !finished {
            violations.append("hang: not every operation finished within \(config.hangTimeoutSeconds) s")
            violations.append(contentsOf: hangReport(run))
            for queue in run.queues {
                queue.cancelAllOperations()
            }
            return Outcome(seed: scenario.seed, operationCount: createdCount(run), violations: violations, hung: true)
        }
        if !eventually(seconds: 10, { run.queues.allSatisfy { $0.operationCount == 0 } }) {
            violations.append("queues still hold operations after all of them finished: \(run.queues.map(\.operationCount))")
        }

        var cycles: Set<DependencyCycleError> = []
        var cycleFailures: Set<Int> = []
        for id in scenario.nodes.indices {
            guard let error = run.recorder.traces[id].record.withLockedValue({ $0.final?.cycleError }) else { continue }
            cycles.insert(error)
            cycleFailures.insert(id)
            run.recorder.noteCancellation(of: id, at: resumed)
        }
        if !scenario.backEdges.isEmpty {
            // Each cycle ended is reported ended once, after it was reported found.
            let ended = DiagnosticsRecorder.shared.cyclesEnded(mentioning: run.token)
            if ended.count != cycles.count || Set(ended) != cycles {
                violations.append("OpDiagnostics reported \(ended.count) cycle(s) ended \(ended), expected one for each of the \(cycles.count) cycle(s) ended: \(cycles)")
            }
            let found = Set(DiagnosticsRecorder.shared.cyclesFound(mentioning: run.token).map { Set($0.operations) })
            for cycle in cycles where !found.contains(Set(cycle.operations)) {
                violations.append("the cycle \(cycle.operations) was ended without being reported found first")
            }
        }

        violations.append(contentsOf: run.recorder.violations.withLockedValue { $0 })
        let queueSnapshots = run.recorder.queues.map { trace in
            InvariantChecker.QueueSnapshot(
                width: trace.width,
                peak: trace.peak.load(ordering: .sequentiallyConsistent),
                order: trace.additions.withLockedValue { $0.order })
        }
        let checker = InvariantChecker(
            scenario: scenario, records: run.recorder.records, queues: queueSnapshots,
            dependencies: dependencies, cycleFailures: cycleFailures, nodeID: run.nodeID(in:))
        violations.append(contentsOf: checker.violations())

        // Only weak references remain: every finished operation must be released (drainers and
        // finisher threads may drop their last reference a moment after the end), operations on
        // dependency cycles and loops of dependencies among finished operations included.
        operations = []
        run.tokens.withLockedValue { $0.removeAll() }
        let checked = run.references.indices
        if !eventually(seconds: 10, { checked.allSatisfy { run.references[$0].operation == nil } }) {
            let alive = checked.filter { run.references[$0].operation != nil }
            violations.append("\(alive.count) finished operation(s) not released: \(alive.prefix(10).map { "n\($0) \(scenario.nodes[$0].kind)" })")
        }
        if !eventually(seconds: 10, { run.recorder.activeCallbacks.load(ordering: .acquiring) == 0 }) {
            violations.append("\(run.recorder.activeCallbacks.load(ordering: .acquiring)) thread(s) still inside scenario code after the end")
        }
        return Outcome(seed: scenario.seed, operationCount: createdCount(run), violations: violations, hung: false,
                       cycleCount: cycles.count, statistics: checker.statistics())
    }

    /// Checks that the shared worker pool is idle: no job waits and every thread is parked, so no
    /// worker is left blocked.
    ///
    /// The pool is shared with every test running in parallel, hence the generous wait; and in a
    /// full run another test may hold a worker for longer still (an operation blocked on a gate
    /// while its test waits for a thread), so there a pool that stays busy is only printed. With
    /// `OPERATIONS_STRESS_POOL_CHECK=1`, for a run of the stress suites alone (CI has one), it is
    /// a violation.
    static func workerPoolIdleViolation(seconds: Double = 30) -> String? {
        if eventually(seconds: seconds, {
            let statistics = WorkerPool.shared.statistics
            return statistics.pending == 0 && statistics.idle == statistics.threads
        }) {
            return nil
        }
        let statistics = WorkerPool.shared.statistics
        let message = "the worker pool is not idle after \(Int(seconds)) s: \(statistics.threads) threads, \(statistics.idle) idle, \(statistics.pending) jobs pending"
        guard StressEnvironment.requiresIdleWorkerPool else {
            print("note: \(message) (other tests share the pool; OPERATIONS_STRESS_POOL_CHECK=1 with the stress suites alone makes this a failure)")
            return nil
        }
        return message
    }

    /// Waits until everything added to the queues so far has finished, with a barrier that
    /// signals; returns `false` after `seconds` (a hang) instead of freezing the test run.
    ///
    /// No thread of `DispatchQueue.global()` is blocked for it: on Linux, Dispatch adds a thread
    /// for blocked work only about once a second, which would delay the tests' own asynchronous
    /// work on that queue.
    static func waitUntilEmpty(_ queues: [OpQueue], seconds: Int = 30) -> Bool {
        let done = DispatchSemaphore(value: 0)
        for queue in queues {
            queue.addBarrierBlock { done.signal() }
        }
        let deadline = DispatchTime.now() + .seconds(seconds)
        for _ in queues where done.wait(timeout: deadline) == .timedOut {
            return false
        }
        // Each barrier leaves its queue just after its block returns.
        return eventually(seconds: Double(seconds)) { queues.allSatisfy { $0.operationCount == 0 } }
    }

    private static func createdCount(_ run: StressRun) -> Int {
        run.recorder.traces.count { $0.record.withLockedValue(\.created) }
    }

    // MARK: Cycles

    /// Adds the back edges one by one, every queue still suspended, and checks each against the
    /// model. No edge ends anything: closing a cycle only reports it (a cycle reported at least
    /// ``OpQueue/dependencyCycleGracePeriod`` earlier may have been ended since, as documented,
    /// and its operations then hold nothing back). An edge whose dependency
    /// already waits for its dependent through dependencies closes a cycle: a new backward edge
    /// (to a newer operation) must be reported at once, as a cycle through it made of
    /// dependencies of the model (unless that very set of operations was reported before); a new
    /// forward edge may be left to the stalled queue's search (the quick search on forward edges
    /// is bounded). Cycles that also go through barriers are found once the queues stall; the
    /// checker verifies them at the end.
    private static func applyBackEdges(
        _ scenario: StressScenario, run: StressRun, operations: [Op?],
        dependencies: inout [[Int]], violations: inout [String]
    ) {
        let candidates = operations.indices.filter { operations[$0] != nil }
        // A reported cycle whose operations are all in (suspended) queues is ended once it has
        // stayed unbroken for the grace period, as documented; on a loaded machine these edges
        // can take longer than that. Each reported cycle is kept with the moment before the edge
        // that closed it (no later than the start of its grace period): only a cycle reported at
        // least a grace period ago may have been ended. An ended operation holds nothing back, so
        // whether an edge closes a cycle is read twice: without the operations ended before the
        // edge (a cycle reported must be there) and without those ended after it (a cycle there
        // existed all along and must be reported).
        var reported: [(operations: Set<Int>, before: ContinuousClock.Instant)] = []
        var endedEarlier: Set<Int> = []
        for edge in scenario.backEdges {
            let dependent = edge.dependent, dependency = edge.dependency
            let mayCloseCycle = closesCycle(dependent, dependency, dependencies, excluded: endedEarlier)
            let isBackward = dependency > dependent   // ids follow creation order
            let reportsBefore = DiagnosticsRecorder.shared.cyclesFound(mentioning: run.token)
            let before = ContinuousClock.now
            operations[dependent]!.addDependency(operations[dependency]!)
            dependencies[dependent].append(dependency)
            let edgeText = "\(isBackward ? "backward" : "forward") edge n\(dependent) → n\(dependency)"
            let reports = DiagnosticsRecorder.shared.cyclesFound(mentioning: run.token)
            let newReports = reports.dropFirst(reportsBefore.count)
            if newReports.count > 1 {
                violations.append("\(edgeText) was reported \(newReports.count) times: \(Array(newReports))")
            }
            var newCycles: [[Int]] = []
            for report in newReports {
                let order = report.operations.map(run.nodeID(in:))
                guard !order.contains(nil) else {
                    violations.append("\(edgeText): the report names operations of another run: \(report.operations)")
                    continue
                }
                newCycles.append(order.map { $0! })
            }
            reported.append(contentsOf: newCycles.map { (Set($0), before) })

            let ended = candidates.filter { operations[$0]!.error != nil || operations[$0]!.isCancelled }
            let checked = ContinuousClock.now, grace = OpQueue.dependencyCycleGracePeriod
            let endedAfterGrace = Set(reported.filter { checked - $0.before >= grace }.flatMap(\.operations))
            let unexpected = ended.filter { !endedAfterGrace.contains($0) }
            if !unexpected.isEmpty {
                violations.append("\(edgeText) ended \(unexpected.map { "n\($0)" }); closing a cycle must change nothing")
            }
            let surelyClosesCycle = closesCycle(dependent, dependency, dependencies, excluded: endedEarlier.union(ended))
            endedEarlier.formUnion(ended)

            for cycle in newCycles {
                if !mayCloseCycle {
                    violations.append("\(edgeText) closes no cycle, yet \(cycle.map { "n\($0)" }) was reported")
                }
                if !cycle.contains(dependent) || !cycle.contains(dependency) {
                    violations.append("\(edgeText): the cycle \(cycle.map { "n\($0)" }) does not go through the new edge")
                }
                for (index, node) in cycle.enumerated() where !dependencies[node].contains(cycle[(index + 1) % cycle.count]) {
                    violations.append("\(edgeText): n\(node) does not depend on n\(cycle[(index + 1) % cycle.count]), the next operation of the reported cycle \(cycle.map { "n\($0)" })")
                }
            }
            if surelyClosesCycle && isBackward && newReports.isEmpty {
                // Not reported again only if an earlier report named the same operations (a cycle
                // is known by its set of operations); such a set holds both ends of the edge.
                let names = Set([dependent, dependency].map { operations[$0]!.description })
                if !reportsBefore.contains(where: { names.isSubset(of: $0.operations) }) {
                    violations.append("\(edgeText) closes a cycle, but it was not reported")
                }
            }
        }
    }

    /// Whether the edge `dependent` → `dependency` closes a cycle of the model's dependencies
    /// that avoids the `excluded` operations (ended ones, which wait for nothing).
    private static func closesCycle(_ dependent: Int, _ dependency: Int, _ dependencies: [[Int]], excluded: Set<Int>) -> Bool {
        !excluded.contains(dependent) && !excluded.contains(dependency)
            && StressScenario.path(from: dependency, to: dependent, dependencies, excluded: excluded)
    }

    // MARK: Hangs

    /// The counters of a queue's scheduler, for hang reports. They are private: read by
    /// reflection, with the queue's own lock (found the same way) held.
    private static func schedulerState(of queue: OpQueue) -> String {
        guard let lock = Mirror(reflecting: queue).children.first(where: { $0.label == "lock" })?.value as? Lock else {
            return "unknown"
        }
        let machine = lock.withLock {
            Mirror(reflecting: queue).children.first(where: { $0.label == "machine" })?.value
        }
        guard let machine else { return "unknown" }
        let wanted: Set<String> = ["runningCount", "pendingDrainers", "barrierCount", "completedBarriers", "epochCounts", "readyBarriers", "held", "staleEntries"]
        return Mirror(reflecting: machine).children.compactMap { child in
            guard let label = child.label, wanted.contains(label) else { return nil }
            if label == "readyBarriers" || label == "held" {
                return "\(label) \(((child.value as? [Int: Any]) ?? [:]).keys.sorted())"
            }
            return "\(label) \(child.value)"
        }.joined(separator: ", ")
    }

    /// What is still unfinished when a run hangs.
    private static func hangReport(_ run: StressRun) -> [String] {
        var lines: [String] = []
        for (index, queue) in run.queues.enumerated() {
            lines.append("q\(index) (width \(run.scenario.queues[index].width)): suspended \(queue.isSuspended), \(queue.operationCount) operation(s), scheduler \(schedulerState(of: queue))")
        }
        if !run.scenario.backEdges.isEmpty {
            lines.append("back edges: \(run.scenario.backEdges.map { "n\($0.dependent) → n\($0.dependency)" })")
        }
        var unfinished = 0
        for id in run.scenario.nodes.indices {
            let record = run.recorder.traces[id].record.withLockedValue { $0 }
            guard record.created, record.leftStamps.isEmpty else { continue }
            unfinished += 1
            guard unfinished <= 200 else { continue }
            let node = run.scenario.nodes[id]
            guard let operation = run.references[id].operation else {
                lines.append("n\(id) \(node.kind) in q\(node.queue): released without finishing")
                continue
            }
            let waiting = operation.dependencies.filter { !$0.isFinished }.map { run.nodeID(in: $0.description).map { "n\($0)" } ?? $0.description }
            let (scheduled, counted, ticket, queue) = operation.withState { ($0.isScheduled, $0.unfinishedDependencyCount, $0.ticket, $0.queue) }
            // The membership is its queue's state, read under the queue's lock.
            let read = { (operation.membership.epoch, operation.membership.hasLiveReadyEntry, operation.membership.readyTicket) }
            let (epoch, hasLiveEntry, readyTicket) = queue.map { $0.withLock(read) } ?? read()
            lines.append("n\(id) \(node.kind) in q\(node.queue): ready \(operation.isReady), scheduled \(scheduled), executing \(operation.isExecuting), finished \(operation.isFinished), cancelled \(operation.isCancelled), error \(operation.error.map { "\($0)" } ?? "nil"), body ran \(record.bodyStarts.count)/\(record.bodyEnds.count), counts \(counted) unfinished dependencies, waits for \(waiting), epoch \(epoch), ticket \(ticket), live entry \(hasLiveEntry) \(readyTicket)")
        }
        lines.append("\(unfinished) operation(s) unfinished")
        return lines
    }
}
