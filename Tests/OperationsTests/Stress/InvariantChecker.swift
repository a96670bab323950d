@testable import Operations

/// Checks the records of a finished stress run against the rules of the operation model.
///
/// Every ordering check compares stamps that the code under test cannot reorder: a stamp taken
/// inside a body (before it returns, so before the operation finishes), the stamp of a waiter
/// registered with `onCompletion` (called after the operation left its queue), or the stamp taken
/// before something that may cancel an operation. Observer stamps are not used for ordering:
/// observers may be called by another thread that is delivering the same operation's changes.
struct InvariantChecker {
    typealias Record = StressRecorder.Record
    typealias Observed = StressRecorder.Observed

    /// What is known about one queue at the end.
    struct QueueSnapshot {
        let width: Int
        /// The most bodies measured running at once.
        let peak: Int
        /// The nodes (operations, children and barriers) in the order they were added.
        let order: [Int]
    }

    let scenario: StressScenario
    let records: [Record]
    let queues: [QueueSnapshot]
    /// Every dependency, back edges and children on their parents included.
    let dependencies: [[Int]]
    /// Operations ended with a `DependencyCycleError`.
    let cycleFailures: Set<Int>
    /// The node of an operation's description, if it belongs to the run.
    let nodeID: (String) -> Int?

    /// The wait-for graph: every dependency, and the implicit edges of barriers (a barrier waits
    /// for the operations added to its queue before it, and the operations added after it wait
    /// for it).
    var waitsFor: [[Int]] {
        var edges = dependencies
        for queue in queues {
            var previousBarrier: Int?
            var epoch: [Int] = []
            for id in queue.order {
                if scenario.nodes[id].isBarrier {
                    edges[id].append(contentsOf: epoch + (previousBarrier.map { [$0] } ?? []))
                    previousBarrier = id
                    epoch = []
                } else {
                    if let previousBarrier { edges[id].append(previousBarrier) }
                    epoch.append(id)
                }
            }
        }
        return edges
    }

    /// Every rule broken, one line each.
    func violations() -> [String] {
        var violations: [String] = []
        checkEachOperation(&violations)
        checkDependencies(&violations)
        checkWidths(&violations)
        checkBarriers(&violations)
        checkPriorities(&violations)
        checkCycles(&violations)
        return violations
    }

    /// What the run exercised, to show that the checks had something to check.
    func statistics() -> [String: Int] {
        var counts: [String: Int] = [:]
        for node in scenario.nodes where records[node.id].created {
            let record = records[node.id]
            let cancelled = record.final?.isCancelled ?? false
            counts["operations", default: 0] += 1
            counts[record.ran ? (cancelled ? "cancelled while running" : "ran") : "cancelled before running", default: 0] += 1
            if node.isBarrier { counts["barriers", default: 0] += 1 }
            if node.isChild { counts["children", default: 0] += 1 }
            if node.isObserved { counts["observed", default: 0] += 1 }
            if node.hasCompletionBlock { counts["completion blocks", default: 0] += 1 }
            if case .async = node.kind { counts["asynchronous", default: 0] += 1 }
            if record.ran { counts["dependencies checked", default: 0] += dependencies[node.id].count }
        }
        for queue in queues where queue.width == 1 {
            counts["starts in width-1 queues", default: 0] += queue.order.count { records[$0].ran }
        }
        counts["cycles"] = Set(cycleFailures.compactMap { records[$0].final?.cycleError }).count
        return counts
    }

    // MARK: Cycles

    /// Every error names a real cycle of the wait-for graph, in order (each operation waits for
    /// the next, the last for the first), and every operation it names was ended with a cycle error.
    private func checkCycles(_ violations: inout [String]) {
        let errors = Set(cycleFailures.compactMap { records[$0].final?.cycleError })
        guard !errors.isEmpty else { return }
        let edges = waitsFor
        for error in errors {
            let order = error.operations.map(nodeID)
            guard !order.contains(nil) else {
                violations.append("a cycle error names operations of another run: \(error.operations)")
                continue
            }
            let cycle = order.map { $0! }
            let names = cycle.map { "n\($0)" }
            for (index, node) in cycle.enumerated() {
                let next = cycle[(index + 1) % cycle.count]
                if !edges[node].contains(next) {
                    violations.append("the cycle \(names) is not one: n\(node) does not wait for n\(next)")
                }
                // Any cycle error: an operation on two cycles is ended twice and keeps the second
                // error (see `StressTests.Cycles.anOperationOnTwoCyclesKeepsTheErrorOfTheFirst`).
                if records[node].final?.cycleError == nil {
                    violations.append("n\(node) is on the cycle \(names) but was not ended with a DependencyCycleError")
                }
            }
        }
    }

    // MARK: One operation

    /// Each operation finished exactly once, ran once (every block once) or was cancelled, got the
    /// right error, each completion block ran once and in order, and each observer saw exactly the
    /// changes its operation went through, once and in order.
    private func checkEachOperation(_ violations: inout [String]) {
        for node in scenario.nodes {
            let record = records[node.id]
            let name = "n\(node.id) (\(node.kind))"
            guard record.created else {
                if let parent = node.parent, !records[parent].ran { continue }
                violations.append("\(name) was never created")
                continue
            }
            if let parent = node.parent, !records[parent].ran {
                violations.append("\(name) was created although its parent n\(parent) never ran")
            }
            if record.leftStamps.count != 1 {
                violations.append("\(name) finished \(record.leftStamps.count) times")
            }
            guard let final = record.final else {
                violations.append("\(name) has no final state")
                continue
            }
            if !final.isFinished || final.isExecuting {
                violations.append("\(name) ended with isFinished \(final.isFinished), isExecuting \(final.isExecuting)")
            }

            let isFailed = cycleFailures.contains(node.id)
            if record.ran {
                let runs = if case .block(let count) = node.kind { count } else { 1 }
                if record.bodyStarts.count != runs || record.bodyEnds.count != runs {
                    violations.append("\(name) body started \(record.bodyStarts.count) and ended \(record.bodyEnds.count) times, expected \(runs)")
                }
                if node.cancellation == .beforeAdding {
                    violations.append("\(name) ran although it was cancelled before it was added")
                }
                if isFailed {
                    violations.append("\(name) ran although it is on a dependency cycle")
                }
            } else {
                if !final.isCancelled {
                    violations.append("\(name) finished without running but is not cancelled")
                }
                if record.cancelEvidence == nil {
                    violations.append("\(name) never ran although nothing cancelled it")
                }
            }
            if isFailed {
                if final.cycleError == nil {
                    violations.append("\(name) is on a cycle but its error is not a DependencyCycleError")
                }
            } else if final.cycleError != nil || final.hasOtherError {
                violations.append("\(name) has an unexpected error (cycle error: \(String(describing: final.cycleError)))")
            }
            if node.kind == .invocation, record.ran, !final.isCancelled, final.invocationResult != node.id {
                violations.append("\(name) has result \(String(describing: final.invocationResult))")
            }
            checkObservers(node, record, final, name, &violations)
            checkCompletionBlock(node, record, name, &violations)
        }
    }

    private func checkObservers(_ node: StressScenario.Node, _ record: Record, _ final: StressRecorder.Final, _ name: String, _ violations: inout [String]) {
        guard node.isObserved else {
            if !record.observed.isEmpty {
                violations.append("\(name) is not observed, yet recorded \(record.observed)")
            }
            return
        }
        var expected: [Observed] = []
        if record.ran {
            expected.append(Observed(property: .isExecuting, old: false, new: true))
            if final.isCancelled {
                expected.append(Observed(property: .isCancelled, old: false, new: true))
            }
            expected.append(Observed(property: .isExecuting, old: true, new: false))
        } else if final.isCancelled {
            expected.append(Observed(property: .isCancelled, old: false, new: true))
        }
        expected.append(Observed(property: .isFinished, old: false, new: true))
        if record.observed != expected {
            violations.append("\(name) observers saw \(record.observed), expected \(expected)")
        }
    }

    private func checkCompletionBlock(_ node: StressScenario.Node, _ record: Record, _ name: String, _ violations: inout [String]) {
        guard node.hasCompletionBlock else {
            if !record.completionStarts.isEmpty {
                violations.append("\(name) has no completion block, yet one ran")
            }
            return
        }
        guard record.completionStarts.count == 1, record.completionEnds.count == 1 else {
            violations.append("\(name) completion block started \(record.completionStarts.count) and returned \(record.completionEnds.count) times")
            return
        }
        if let end = record.end, record.completionStarts[0] < end {
            violations.append("\(name) completion block started before the body ended")
        }
        if let left = record.leftStamps.first, record.completionEnds[0] > left {
            violations.append("\(name) was finished for good before its completion block returned")
        }
    }

    // MARK: Dependencies

    /// No body started before each of its dependencies had finished: ended its body (which is
    /// before it finishes), or never ran and was cancelled before the dependent started.
    private func checkDependencies(_ violations: inout [String]) {
        for node in scenario.nodes {
            guard let start = records[node.id].start else { continue }
            for dependency in dependencies[node.id] {
                let record = records[dependency]
                if record.ran {
                    guard let end = record.end, end < start else {
                        violations.append("n\(node.id) started (\(start)) before its dependency n\(dependency) ended (\(record.end.map(String.init) ?? "never"))")
                        continue
                    }
                } else {
                    guard let evidence = record.cancelEvidence, evidence < start else {
                        violations.append("n\(node.id) started (\(start)) although its dependency n\(dependency) never ran and was not cancelled before that")
                        continue
                    }
                }
            }
        }
    }

    // MARK: Widths

    /// A queue never ran more bodies at once than its width.
    private func checkWidths(_ violations: inout [String]) {
        for (index, queue) in queues.enumerated() where queue.width > 0 && queue.peak > queue.width {
            violations.append("q\(index) ran \(queue.peak) operations at once, width \(queue.width)")
        }
    }

    // MARK: Barriers

    /// A barrier starts after everything added before it to its queue has left the queue, and
    /// nothing added after it starts before it has returned.
    private func checkBarriers(_ violations: inout [String]) {
        for (queueIndex, queue) in queues.enumerated() {
            for (position, barrier) in queue.order.enumerated() where scenario.nodes[barrier].isBarrier {
                let record = records[barrier]
                if let start = record.start {
                    for earlier in queue.order[..<position] {
                        let earlierRecord = records[earlier]
                        // Leaving the queue comes after the completion block, the body, or the
                        // cancellation of an operation that did not run.
                        let evidence = earlierRecord.completionEnds.last ?? earlierRecord.end ?? earlierRecord.cancelEvidence
                        if evidence == nil || evidence! >= start {
                            violations.append("barrier n\(barrier) of q\(queueIndex) started (\(start)) before n\(earlier), added before it, was done (\(evidence.map(String.init) ?? "never"))")
                        }
                    }
                } else if record.cancelEvidence == nil {
                    violations.append("barrier n\(barrier) of q\(queueIndex) never ran although nothing cancelled it")
                }
                let done = record.end ?? record.cancelEvidence
                for later in queue.order[(position + 1)...] {
                    guard let laterStart = records[later].start else { continue }
                    if done == nil || laterStart <= done! {
                        violations.append("n\(later) of q\(queueIndex), added after barrier n\(barrier), started (\(laterStart)) before the barrier returned (\(done.map(String.init) ?? "never"))")
                    }
                }
            }
        }
    }

    // MARK: Priorities

    /// In a width-1 queue, an operation S starts only after the previous body P gave back the slot.
    /// An operation H that was certainly on the ready list before P ended (added, every dependency
    /// and the barrier before it finished for good) was ready when S was picked: if H has a higher
    /// priority, it must start before S.
    private func checkPriorities(_ violations: inout [String]) {
        let levels = Op.QueuePriority.allCases.count
        for (queueIndex, queue) in queues.enumerated() where queue.width == 1 {
            let runs = queue.order.compactMap { id -> (id: Int, start: UInt64, end: UInt64)? in
                guard let start = records[id].start, let end = records[id].end else { return nil }
                return (id, start, end)
            }.sorted { $0.start < $1.start }
            // For each level, the earliest ready bound among the operations that start later.
            var earliest = [(bound: UInt64, id: Int)?](repeating: nil, count: levels)
            for index in runs.indices.reversed() {
                let current = runs[index]
                let node = scenario.nodes[current.id]
                guard !node.isBarrier else { continue }
                if index > 0 {
                    let previousEnd = runs[index - 1].end
                    for level in 0..<node.priority.readyListIndex {
                        if let candidate = earliest[level], candidate.bound < previousEnd {
                            violations.append("q\(queueIndex) (width 1) started n\(current.id) (\(node.priority)) while n\(candidate.id) (\(scenario.nodes[candidate.id].priority)) had been ready since before n\(runs[index - 1].id) ended")
                        }
                    }
                }
                if let bound = readyBound(current.id) {
                    let level = node.priority.readyListIndex
                    if earliest[level] == nil || bound < earliest[level]!.bound {
                        earliest[level] = (bound, current.id)
                    }
                }
            }
        }
    }

    /// A stamp taken after the operation was certainly on its queue's ready list: after its
    /// addition returned, after each dependency and the barrier before it finished for good.
    private func readyBound(_ id: Int) -> UInt64? {
        guard var bound = records[id].addStamp else { return nil }
        for dependency in dependencies[id] {
            guard let left = records[dependency].leftStamps.first else { return nil }
            bound = max(bound, left)
        }
        if let barrier = records[id].barrierBefore {
            guard let left = records[barrier].leftStamps.first else { return nil }
            bound = max(bound, left)
        }
        return bound
    }
}
