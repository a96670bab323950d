import Dispatch
@testable import Operations

/// Runs a ``CompositionScenario`` and checks it: the driver creates the operations in id order
/// (children before their group), adds the top-level ones to their queues, cancels and observes
/// following the script, waits for every completion block (with a hang guard), then checks what
/// ``CompositionRun`` recorded, and that every operation (every retry attempt too) is released
/// and no category is held. The checks of retries, timeouts, delays and injections are in
/// `CompositionHarness+Control.swift`.
enum CompositionHarness {
    struct Outcome {
        let seed: UInt64
        var operationCount = 0
        var violations: [String] = []
        var known: [(CompositionKnownIssue, String)] = []
        var hung = false
        var statistics: [String: Int] = [:]
    }

    static func run(_ scenario: CompositionScenario, hangTimeoutSeconds: Int = 60) -> Outcome {
        let run = CompositionRun(scenario: scenario)
        var outcome = Outcome(seed: scenario.seed)
        // The driver's references to every static operation, dropped before the leak check.
        var operations: [Op?] = Array(repeating: nil, count: scenario.nodes.count)
        var created = 0

        func create(upTo limit: Int) {
            while created < limit {
                let id = created
                created += 1
                let node = scenario.nodes[id]
                guard !node.isDynamic else { continue }
                let operation = run.makeOperation(id)
                operations[id] = operation
                if node.cancelledBeforeAdding {
                    operation.cancel()
                }
            }
        }

        for step in scenario.steps {
            switch step {
            case .create(let limit):
                create(upTo: limit)
            case .add(let ids, let queue, let oneByOne):
                let batch = ids.map { operations[$0]! }
                if oneByOne {
                    for operation in batch { run.queues[queue].addOperation(operation) }
                } else {
                    run.queues[queue].addOperations(batch, waitUntilFinished: false)
                }
            case .cancel(let id, let withError):
                guard let operation = run.boxes[id].operation else { continue }
                if withError {
                    operation.cancel(with: CompositionError(node: id, reason: "driver"))
                } else {
                    operation.cancel()
                }
            case .observe(let id):
                run.attachLateObserver(id)
            case .pause(let microseconds):
                StressRun.pause(.spin(microseconds: microseconds))
            case .resume(let queue):
                run.queues[queue].isSuspended = false
            }
        }
        for queue in run.queues { queue.isSuspended = false }

        let finished = run.pending.wait(timeout: .now() + .seconds(hangTimeoutSeconds)) == .success
        outcome.operationCount = run.state.withLockedValue { $0.records.count(where: \.created) }
        if !finished {
            outcome.hung = true
            outcome.violations.append("hang: not every operation finished within \(hangTimeoutSeconds) s")
            outcome.violations.append(contentsOf: hangReport(run))
            // Unwind as far as cancelling lets it, so that the next rounds start clean.
            for box in run.boxes { box.operation?.cancel() }
            _ = run.pending.wait(timeout: .now() + .seconds(10))
            return outcome
        }
        if !eventually(seconds: 10, { run.queues.allSatisfy { $0.operationCount == 0 } }) {
            outcome.violations.append("queues still hold operations after every completion block ran: \(run.queues.map(\.operationCount))")
        }
        // Callbacks posted late may still be on their way.
        _ = eventually(seconds: 3) { observersSettled(run) }
        _ = eventually(seconds: 3) { cascadesSettled(run, operations: operations) }

        check(run, operations: operations, into: &outcome)

        operations = []
        let alive = { run.boxes.indices.filter { run.boxes[$0].operation != nil } }
        if !eventually(seconds: 10, { alive().isEmpty }) {
            let leaked = alive()
            outcome.violations.append("\(leaked.count) operation(s) not released once the run dropped its references: \(leaked.prefix(12).map { describe($0, run) })")
        }
        let attempts = run.state.withLockedValue { $0.attemptBoxes }
        let aliveAttempts = { attempts.filter { $0.1.operation != nil }.map(\.0) }
        if !eventually(seconds: 10, { aliveAttempts().isEmpty }) {
            let leaked = aliveAttempts()
            outcome.violations.append("\(leaked.count) RetryOp attempt(s) not released after the run: \(leaked.prefix(12))")
        }
        for (index, name) in run.categoryNames.enumerated() {
            let holders = Exclusivity.holders(of: name)
            if !holders.isEmpty {
                outcome.violations.append("category \(index) is still held after the run by \(holders.map(\.description))")
            }
        }
        return outcome
    }

    /// Every observer added before its operation finished has heard the finish, and a cancelled
    /// operation's observers the cancellation.
    private static func observersSettled(_ run: CompositionRun) -> Bool {
        run.state.withLockedValue { state in
            state.records.allSatisfy { record in
                guard record.created, record.completions > 0 else { return true }
                return record.observerLogs.allSatisfy { log in
                    guard !log.late || log.notFinishedAfterAttach else { return true }
                    let finished = log.events.contains { if case .didFinish = $0.event { true } else { false } }
                    let cancelled = log.events.contains { if case .didCancel = $0.event { true } else { false } }
                    return finished && (log.late || !record.finalCancelled || cancelled)
                }
            }
        }
    }

    // MARK: Checks

    private static func check(_ run: CompositionRun, operations: [Op?], into outcome: inout Outcome) {
        let scenario = run.scenario
        // Read what only live operations can tell while the driver still holds them. A finished
        // group holds none of its children: the children the driver holds are checked, each of
        // which must still name the group as its own, and the group's counts.
        var groupChildren: [Int: [Op]] = [:]
        var groupErrors: [Int: (any Error)?] = [:]
        var membershipViolations: [String] = []
        for node in scenario.nodes where node.isGroup {
            guard let group = operations[node.id] as? GroupOp else { continue }
            let held = scenario.nodes.filter { $0.group == node.id }.compactMap { operations[$0.id] }
            groupChildren[node.id] = held
            groupErrors[node.id] = group.error
            for child in held where child.group !== group {
                membershipViolations.append("\(describe(node.id, run)): its child \(child) names \(child.group.map { "\($0)" } ?? "no group") as its group")
            }
            let (listed, added, finished) = (group.children.count, group.childCount, group.finishedChildCount)
            if group.isFinished && (listed != 0 || finished != added || added < node.groupPlan!.children.count) {
                membershipViolations.append("\(describe(node.id, run)): finished holding \(listed) children, \(finished) of \(added) finished, \(node.groupPlan!.children.count) planned")
            }
        }
        let (records, liveViolations, liveKnown, nestedHolds, widthReached) = run.state.withLockedValue {
            ($0.records, $0.violations, $0.known, $0.nestedHolds, $0.widthReached)
        }
        var violations = liveViolations + membershipViolations
        var known = liveKnown
        var statistics: [String: Int] = ["bodies run under an ancestor's hold": nestedHolds, "width limits reached": widthReached]
        func count(_ key: String, _ add: Bool = true) { if add { statistics[key, default: 0] += 1 } }
        func id(of operation: Op) -> Int? {
            guard let name = operation.name, name.hasPrefix("\(run.token).n") else { return nil }
            return Int(name.dropFirst("\(run.token).n".count))
        }

        for node in scenario.nodes {
            let id = node.id
            var record = records[id]
            guard record.created else { continue }
            // A mapped operation's body (the transform) does not run when its source failed: it
            // counts as run once it executed.
            let ran = node.mapSource != nil ? record.executions > 0 : record.bodyStarts > 0
            count("operations")
            count("groups", node.isGroup)
            count("nested groups", node.isGroup && node.group != nil)
            count("children made at run time", node.isDynamic)
            count("bodies run", ran && !node.isGroup)
            count("cancelled", record.finalCancelled)
            count("failed", record.finalError != nil)
            count("condition failures", record.finalConditionFailure != nil)
            count("exclusive bodies run", ran && !node.categories.isEmpty)
            count("groups holding categories", !record.heldCategories.isEmpty)
            count("observed operations", !record.observerLogs.isEmpty)
            count("late observers", record.observerLogs.contains(where: \.late))
            count("operations produced", !record.produced.isEmpty)
            count("groups with GroupError", node.isGroup && groupErrors[id].flatMap { $0 } is GroupError)
            count("failures cascading (cancelsChildrenOnFailure)", node.isGroup && node.groupPlan!.cancelsChildrenOnFailure
                && (groupChildren[id] ?? []).contains { $0.error != nil })

            if node.kind == .permission {
                if record.completions == 0 {
                    let dependent = node.permissionFor!
                    if records[dependent].finalCancelled {
                        known.append((.permissionNeverAdded, "n\(id), the .dependency operation of n\(dependent) (cancelled before it was enqueued), never ran nor finished"))
                    } else {
                        violations.append("n\(id), the .dependency operation of n\(dependent), never finished although n\(dependent) was not cancelled")
                    }
                }
                continue
            }
            if record.completions != 1 {
                violations.append("\(describe(id, run)): completion block ran \(record.completions) times")
                continue
            }
            if record.finalIsCycleError {
                violations.append("\(describe(id, run)): ended with a DependencyCycleError, but the plan has no cycle: \(record.finalError ?? "")")
            }

            // Conditions: a body runs only if they pass; a failure names the deciding condition.
            let failing = failingCondition(record.conditionModels, id: id, records: records)
            if passesThroughSourceError(id, scenario: scenario, records: records, failing: failing) {
                // A mapped operation's error is its source's: not a failure of its own conditions.
                record.finalConditionFailure = nil
            }
            let recordsCancels = node.recordsCancels
            if let conditionFailure = record.finalConditionFailure {
                if failing == nil {
                    violations.append("\(describe(id, run)): failed condition \(conditionFailure), yet its conditions pass")
                } else if failing != conditionFailure {
                    violations.append("\(describe(id, run)): failed condition \(conditionFailure), expected \(failing!) to decide")
                }
            }
            if !node.isGroup {
                if ran, let failing {
                    violations.append("\(describe(id, run)): its body ran although its condition \(failing) fails")
                }
                if ran && scenario.isCancelledBeforeAdding(id) {
                    violations.append("\(describe(id, run)): its body ran although it (or its group) was cancelled before it was added")
                }
                if !record.finalCancelled && !ran {
                    violations.append("\(describe(id, run)): finished without running its body, yet is not cancelled")
                }
                if case .block(_, true) = node.kind, record.extraBlockRuns != record.bodyStarts {
                    violations.append("\(describe(id, run)): its second block ran \(record.extraBlockRuns) times, its first \(record.bodyStarts)")
                }
                if recordsCancels && record.cancelCalls == 0 {
                    if failing == nil && !ran {
                        violations.append("\(describe(id, run)): nobody cancelled it and its conditions pass, yet its body never ran")
                    }
                    if let failing, record.finalConditionFailure == nil {
                        violations.append("\(describe(id, run)): its condition \(failing) fails, yet it ended with \(record.finalError ?? "no error")")
                    }
                    if failing == nil && ran && node.failure == .none && record.finalError != nil {
                        violations.append("\(describe(id, run)): ran without failing and nobody cancelled it, yet its error is \(record.finalError!)")
                    }
                }
                if record.addedToCancelledGroup && (ran || !record.finalCancelled) {
                    let issue = "\(describe(id, run)): added to its group after the group was cancelled, yet \(ran ? "its body ran" : "it is not cancelled")"
                    if let group = node.group, records[group].finalConditionFailure != nil {
                        known.append((.conditionFailedGroupRunsChildren, issue))
                    } else {
                        violations.append(issue)
                    }
                }
            } else {
                checkGroup(id, run: run, records: records, children: groupChildren[id] ?? [], error: groupErrors[id] ?? nil,
                           failing: failing, idOf: id(of:), violations: &violations, known: &known)
            }

            checkControl(id, run: run, records: records, ran: ran, failing: failing, violations: &violations, statistics: &statistics)

            for (slot, log) in record.observerLogs.enumerated() {
                checkObserverLog(log, slot: slot, id: id, record: record, node: node, conditionFails: failing != nil, run: run,
                                 violations: &violations, known: &known)
            }
        }
        for issue in CompositionKnownIssue.allCases {
            statistics["known issue \(issue.rawValue.prefix(2))"] = known.count { $0.0 == issue }
        }
        statistics = statistics.filter { $0.value > 0 }
        outcome.violations.append(contentsOf: violations)
        outcome.known.append(contentsOf: known)
        outcome.statistics = statistics
    }

    private static func checkGroup(
        _ id: Int, run: CompositionRun, records: [CompositionRun.Record], children: [Op], error: (any Error)?,
        failing: String?, idOf: (Op) -> Int?, violations: inout [String], known: inout [(CompositionKnownIssue, String)]
    ) {
        let scenario = run.scenario
        let node = scenario.nodes[id]
        let record = records[id]
        let plan = node.groupPlan!
        if record.executions != 1 {
            violations.append("\(describe(id, run)): the group executed \(record.executions) times (a group always runs, even cancelled)")
        }
        if record.executions > 0 && !record.executedCancelled, let failing {
            violations.append("\(describe(id, run)): the group ran uncancelled although its condition \(failing) fails")
        }
        let childIDs = children.map { idOf($0) }
        if !Set(plan.children).isSubset(of: Set(childIDs.compactMap { $0 })) {
            violations.append("\(describe(id, run)): its children are \(childIDs.map { $0.map { "n\($0)" } ?? "?" }), expected to include \(plan.children.map { "n\($0)" })")
        }
        // Finished only after every child: each child completed before the group's willFinish.
        for (child, childID) in zip(children, childIDs) {
            guard let childID else { continue }
            if !child.isFinished {
                violations.append("\(describe(id, run)): its child n\(childID) is not finished after the run")
            }
            if let end = record.groupEndStamp, let completed = records[childID].completedStamp, completed > end {
                violations.append("\(describe(id, run)): finished before its child n\(childID) completed")
            }
        }
        // GroupError lists exactly the failed children's errors (read from the records: a group
        // lets its children go as they finish, and children made at run time are gone).
        let childErrors = scenario.nodes.filter { $0.group == id && records[$0.id].created }
            .compactMap { records[$0.id].finalError }.sorted()
        if let groupError = error as? GroupError {
            let listed = groupError.errors.map { "\($0)" }.sorted()
            if listed != childErrors {
                violations.append("\(describe(id, run)): its GroupError lists \(listed), but its children failed with \(childErrors)")
            }
        } else if error == nil {
            if !childErrors.isEmpty {
                violations.append("\(describe(id, run)): no error, but its children failed with \(childErrors)")
            }
        } else if record.finalConditionFailure == nil && !(error is CompositionError)
                    && !(error is OpTimeoutError && node.timeoutMicroseconds != nil) {
            violations.append("\(describe(id, run)): unexpected error \(error!)")
        }
        // A group cancelled before it was added cancels every child: none runs.
        if scenario.isCancelledBeforeAdding(id) {
            for child in children where !child.isCancelled {
                violations.append("\(describe(id, run)): cancelled before it was added, yet its child \(child) is not cancelled")
            }
        }
        // K1: a failed condition cancels the group, but not its children.
        if record.finalConditionFailure != nil {
            let descendants = scenario.nodes.indices.filter { scenario.isAncestor(id, of: $0) && records[$0].created }
            let ranChildren = descendants.filter { records[$0].bodyStarts > 0 && !scenario.nodes[$0].isGroup }
            let uncancelled = descendants.filter { !records[$0].finalCancelled }
            if !ranChildren.isEmpty || !uncancelled.isEmpty {
                known.append((.conditionFailedGroupRunsChildren, "\(describe(id, run)) failed its condition \(record.finalConditionFailure!); descendants \(ranChildren.map { "n\($0)" }) ran their bodies, \(uncancelled.map { "n\($0)" }) are not cancelled"))
            }
        }
        // cancelsChildrenOnFailure: the first failure cancels every other child.
        let uncancelled = uncascadedChildren(of: id, scenario: scenario, records: records, children: children)
        if !uncancelled.isEmpty {
            violations.append("\(describe(id, run)): cancelsChildrenOnFailure, a child failed, yet children \(uncancelled.map { "n\($0)" }) were never cancelled")
        }
    }

    /// For a group with `cancelsChildrenOnFailure` and a failed child: its static children that
    /// were never cancelled, if more than the one that failed first (`cancel()` calls are recorded
    /// by the subclasses; plain BlockOps cannot tell). Empty if all is well. A child that
    /// completed before the first failed child did is excused: the group lets its children go as
    /// they finish, and cancels only those it still holds.
    private static func uncascadedChildren(of id: Int, scenario: CompositionScenario, records: [CompositionRun.Record], children: [Op]) -> [Int] {
        guard let plan = scenario.nodes[id].groupPlan, plan.cancelsChildrenOnFailure, children.contains(where: { $0.error != nil }) else { return [] }
        let firstFailure = scenario.nodes.filter { $0.group == id && records[$0.id].finalError != nil }
            .compactMap { records[$0.id].completedStamp }.min() ?? 0
        let watched = plan.children.filter { scenario.nodes[$0].recordsCancels }
        let neverCancelled = watched.filter { child in
            records[child].cancelCalls == 0 && !(records[child].completedStamp.map { $0 < firstFailure } ?? false)
        }
        let withoutError = neverCancelled.filter { records[$0].finalError == nil }
        return neverCancelled.count > 1 || !withoutError.isEmpty ? neverCancelled : []
    }

    /// The group cancels the other children after the failed one completed, outside its lock: the
    /// last of those calls may come after the group finished (harmlessly: they are finished).
    private static func cascadesSettled(_ run: CompositionRun, operations: [Op?]) -> Bool {
        let records = run.state.withLockedValue { $0.records }
        return run.scenario.nodes.allSatisfy { node in
            guard node.isGroup, operations[node.id] is GroupOp else { return true }
            let held = run.scenario.nodes.filter { $0.group == node.id }.compactMap { operations[$0.id] }
            return uncascadedChildren(of: node.id, scenario: run.scenario, records: records, children: held).isEmpty
        }
    }

    /// The name of the condition that decides a failure (nil if all pass), from the final state of
    /// the dependencies (they had all finished when the conditions were evaluated).
    private static func failingCondition(_ models: [CompositionRun.ConditionModel], id: Int, records: [CompositionRun.Record]) -> String? {
        let dependencies = records[id].actualDependencies
        func failing(_ model: CompositionRun.ConditionModel) -> String? {
            switch model {
            case .leaf(let name, let leaf):
                switch leaf {
                case .fixed(let passes): return passes ? nil : name
                case .noFailedDependencies: return dependencies.contains { records[$0].finalError != nil } ? name : nil
                case .noCancelledDependencies: return dependencies.contains { records[$0].finalCancelled } ? name : nil
                case .exclusive: return nil
                case .dependency(let target):
                    return records[target].finalError != nil || records[target].finalCancelled ? name : nil
                case .injection(let producer, let throwing):
                    // A failed producer fails it even for a cancelled consumer; a throwing closure
                    // only if it ran (it is skipped once the consumer is cancelled).
                    let threw = throwing && records[id].control.injected[producer] != nil
                    return records[producer].finalError != nil || records[producer].finalCancelled || threw ? name : nil
                }
            case .all(_, let parts):
                return parts.lazy.compactMap(failing).first
            case .any(let name, let parts):
                return parts.contains { failing($0) == nil } ? nil : name
            case .not(let name, let inner):
                return failing(inner) == nil ? name : nil
            }
        }
        return models.lazy.compactMap(failing).first
    }

    /// Checks one observer's callbacks: didAttach first; willExecute at most once, before
    /// willFinish; didProduce while executing; willFinish once, then didFinish once and last (only
    /// a cancellation of a running operation may come between them); didCancel exactly once for a
    /// cancelled operation, before willFinish if it never executed.
    private static func checkObserverLog(
        _ log: CompositionRun.ObserverLog, slot: Int, id: Int, record: CompositionRun.Record,
        node: CompositionScenario.Node, conditionFails: Bool, run: CompositionRun,
        violations: inout [String], known: inout [(CompositionKnownIssue, String)]
    ) {
        var events = log.events.map(\.event)
        // K4: a second didCancel for an operation cancelled while its (failing) conditions were
        // evaluated: one from `cancel()`, one from the failed condition.
        var secondCancel = false
        let cancels = events.indices.filter { events[$0].label == "didCancel" }
        if cancels.count == 2, conditionFails {
            events.remove(at: cancels[1])
            secondCancel = true
        }
        // K7: a DelayOp cancelled as it starts may finish before willExecute is delivered.
        var willExecuteAfterFinish = false
        if node.isDelay, record.finalCancelled, let execute = events.firstIndex(of: .willExecute),
           let finish = events.firstIndex(where: { $0.label == "willFinish" }), execute > finish {
            events.remove(at: execute)
            events.insert(.willExecute, at: events.firstIndex(where: { $0.label == "didCancel" }) ?? finish)
            willExecuteAfterFinish = true
        }
        // K6: an observer added late may hear callbacks before its didAttach.
        var attachNotFirst = false
        if let attachIndex = events.firstIndex(of: .attach), attachIndex > 0, log.late {
            events.remove(at: attachIndex)
            events.insert(.attach, at: 0)
            attachNotFirst = true
        }
        let labels = events.map(\.label)
        let observer = "\(describe(id, run)) observer \(slot)\(log.late ? " (added late)" : "")"
        let what = "\(observer): \(log.events.map { describe($0.event) })"
        func indices(_ label: String) -> [Int] { labels.indices.filter { labels[$0] == label } }
        let attach = indices("didAttach"), willExecute = indices("willExecute"), didCancel = indices("didCancel")
        let willFinish = indices("willFinish"), didFinish = indices("didFinish"), didProduce = indices("didProduce")
        let executed = record.bodyStarts > 0 || record.executions > 0

        var problems: [String] = []
        var lateCancel = false
        if attach != [0] { problems.append("didAttach is not first and only once") }
        if willExecute.count > 1 { problems.append("willExecute \(willExecute.count) times") }
        if willFinish.count > 1 { problems.append("willFinish \(willFinish.count) times") }
        if didFinish.count > 1 { problems.append("didFinish \(didFinish.count) times") }
        if didCancel.count > 1 { problems.append("didCancel \(didCancel.count) times") }
        if !log.late {
            if willFinish.count != 1 || didFinish.count != 1 { problems.append("not exactly one willFinish and one didFinish") }
            if willExecute.count != (executed ? 1 : 0) {
                problems.append(executed ? "no willExecute, yet it executed" : "willExecute, yet its body never ran")
            }
            if didCancel.count != (record.finalCancelled ? 1 : 0) {
                problems.append("\(didCancel.count) didCancel for an operation \(record.finalCancelled ? "" : "not ")cancelled")
            }
            if didProduce.count != record.produced.count {
                problems.append("\(didProduce.count) didProduce for \(record.produced.count) operations produced")
            }
            let producedNames = events.compactMap { if case .didProduce(let name) = $0 { name } else { nil } }
            if producedNames != record.produced { problems.append("didProduce named \(producedNames), expected \(record.produced)") }
        } else if log.notFinishedAfterAttach && didFinish.count != 1 {
            problems.append("added before the finish, yet \(didFinish.count) didFinish")
        }
        if let finish = didFinish.first {
            if case .didFinish(let error) = events[finish], error != record.finalError {
                problems.append("didFinish with error \(error ?? "nil"), the operation's is \(record.finalError ?? "nil")")
            }
            for index in (finish + 1)..<labels.count {
                if labels[index] == "didCancel" { lateCancel = true } else { problems.append("\(labels[index]) after didFinish") }
            }
        }
        if let willFinishIndex = willFinish.first {
            if let finish = didFinish.first, finish < willFinishIndex { problems.append("didFinish before willFinish") }
            let end = didFinish.first ?? labels.count
            for index in (willFinishIndex + 1)..<max(end, willFinishIndex + 1) {
                if labels[index] != "didCancel" {
                    problems.append("\(labels[index]) between willFinish and didFinish")
                } else if !executed {
                    lateCancel = true
                }
            }
            if let start = willExecute.first, start > willFinishIndex { problems.append("willExecute after willFinish") }
            for produce in didProduce where produce > willFinishIndex || (willExecute.first.map { produce < $0 } ?? !log.late) {
                problems.append("didProduce outside the execution (at \(produce))")
            }
        }
        if !problems.isEmpty {
            violations.append("\(what): \(problems.joined(separator: "; "))")
        } else {
            let heard = "\(observer) heard \(log.events.map { describe($0.event) })"
            if lateCancel { known.append((.lateDidCancel, heard)) }
            if secondCancel { known.append((.secondDidCancel, heard)) }
            if attachNotFirst { known.append((.attachNotFirst, heard)) }
            if willExecuteAfterFinish { known.append((.delayFinishedBeforeWillExecute, heard)) }
        }
    }

    // MARK: Reports

    static func describe(_ event: CompositionObserverEvent) -> String {
        switch event {
        case .didCancel(let error), .willFinish(let error), .didFinish(let error):
            error.map { "\(event.label)(\($0))" } ?? event.label
        case .didProduce(let name): "didProduce(\(name))"
        case .attach, .willExecute: event.label
        }
    }

    static func describe(_ id: Int, _ run: CompositionRun) -> String {
        let node = run.scenario.nodes[id]
        var text = "n\(id) \(node.kind)"
        if let group = node.group { text += " in group n\(group)" } else if let queue = node.queue { text += " in q\(queue)" }
        if !node.categories.isEmpty { text += " categories \(node.categories)" }
        return text
    }

    /// What is still unfinished when a run hangs.
    private static func hangReport(_ run: CompositionRun) -> [String] {
        let scenario = run.scenario
        var lines: [String] = []
        for (index, queue) in run.queues.enumerated() {
            lines.append("q\(index) width \(scenario.queues[index].width): \(queue.operationCount) operation(s), suspended \(queue.isSuspended)")
        }
        for (index, name) in run.categoryNames.enumerated() {
            lines.append("category \(index) held by \(Exclusivity.holders(of: name).map(\.description))")
        }
        let records = run.state.withLockedValue { $0.records }
        var unfinished = 0
        for node in scenario.nodes where records[node.id].created && records[node.id].completions == 0 && node.kind != .permission {
            unfinished += 1
            guard unfinished <= 80 else { continue }
            guard let operation = run.boxes[node.id].operation else {
                lines.append("\(describe(node.id, run)): released without completing")
                continue
            }
            let waiting = operation.dependencies.filter { !$0.isFinished }.map(\.description)
            var line = "\(describe(node.id, run)): ready \(operation.isReady), executing \(operation.isExecuting), finished \(operation.isFinished), cancelled \(operation.isCancelled), body ran \(records[node.id].bodyStarts), waits for \(waiting), conditions \(operation.conditions.map(\.name))"
            if let group = operation as? GroupOp {
                line += ", unfinished children \(group.children.filter { !$0.isFinished }.map(\.description))"
            }
            lines.append(line)
        }
        lines.append("\(unfinished) operation(s) unfinished")
        return lines
    }
}
