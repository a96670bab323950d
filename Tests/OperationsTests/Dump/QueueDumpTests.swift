import Testing
import Dispatch
@testable import Operations

/// `OpQueue.dump()` on live queues: each member's state and, for each waiting one, exactly what
/// holds it.
@Suite struct QueueDumpTests {
    /// Makes this test's names its own (exclusivity categories are process-wide).
    let token = uniqueToken("dump")

    private func named(_ name: String, _ body: @escaping @Sendable () -> Void = {}) -> BlockOp {
        let op = BlockOp(block: body)
        op.name = name
        return op
    }

    private func queue(_ name: String, width: Int = OpQueue.defaultMaxConcurrentOperationCount) -> OpQueue {
        let queue = OpQueue()
        queue.name = name
        queue.maxConcurrentOperationCount = width
        return queue
    }

    private func lines(of queue: OpQueue) -> [String] {
        queue.dump().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// Resumes `queue`, cancels what is left and waits (with a hang guard) for it to empty.
    private func finish(_ queue: OpQueue, cancelling: Bool = false) {
        if cancelling { queue.cancelAllOperations() }
        queue.isSuspended = false
        #expect(queueEmpties(queue))
    }

    // MARK: Empty queue and debugDescription

    @Test func anEmptyQueueIsItsHeaderLine() {
        let queue = queue("empty")
        #expect(queue.dump() == "OpQueue \"empty\" (max concurrent: default, suspended: no): 0 operations, 0 running")
        queue.maxConcurrentOperationCount = 3
        queue.isSuspended = true
        #expect(queue.dump() == "OpQueue \"empty\" (max concurrent: 3, suspended: yes): 0 operations, 0 running")
    }

    @Test func debugDescriptionIsTheDump() {
        let queue = queue("debug")
        queue.isSuspended = true
        let a = named("a"), b = named("b")
        b.addDependency(a)
        queue.addOperations([a, b], waitUntilFinished: false)
        #expect(queue.debugDescription == queue.dump())
        #expect(String(reflecting: queue) == queue.dump())
        #expect(queue.dump().contains("BlockOp \"b\""))
        #expect(queue.description == "OpQueue \"debug\"", "description is unchanged")
        finish(queue)
    }

    // MARK: Suspension

    @Test func aReadyOperationOfASuspendedQueueIsHeldBySuspension() {
        let queue = queue("suspended")
        queue.isSuspended = true
        let a = named("a"), cancelled = named("c")
        cancelled.cancel()
        queue.addOperations([a, cancelled], waitUntilFinished: false)
        #expect(lines(of: queue) == [
            "OpQueue \"suspended\" (max concurrent: default, suspended: yes): 2 operations, 0 running",
            "  ⏸ ready      BlockOp \"a\" (priority: normal) — queue is suspended",
            "  ⏸ cancelled  BlockOp \"c\" (priority: normal) — queue is suspended",
        ])
        finish(queue)
        #expect(a.isFinished && cancelled.isFinished)
    }

    // MARK: Dependencies

    @Test func aWaitingOperationNamesItsUnfinishedDependenciesAndWhereTheyAre() {
        let gate = Gate(), started = Gate()
        let other = queue("other")
        let running = named("running") { started.open(); gate.wait() }
        let elsewhere = named("elsewhere")   // in no queue: nothing will ever start it
        let sibling = named("sibling")
        let done = named("done")
        let dependent = named("dependent")
        for dependency in [running, elsewhere, sibling, done] { dependent.addDependency(dependency) }
        done.start()
        other.addOperation(running)
        #expect(started.wait())
        let queue = queue("dependencies")
        queue.isSuspended = true
        queue.addOperations([sibling, dependent], waitUntilFinished: false)
        #expect(lines(of: queue) == [
            "OpQueue \"dependencies\" (max concurrent: default, suspended: yes): 2 operations, 0 running",
            "  ⏸ ready      BlockOp \"sibling\" (priority: normal) — queue is suspended",
            "  ⏸ waiting    BlockOp \"dependent\" (priority: normal) — for dependencies: BlockOp \"running\" (executing, in OpQueue \"other\"), BlockOp \"elsewhere\" (ready, in no queue), BlockOp \"sibling\" (ready)",
        ])
        gate.open()
        elsewhere.start()
        finish(queue)
        #expect(queueEmpties(other))
        #expect(dependent.isFinished && !dependent.isCancelled)
    }

    @Test func conditionsLeftAfterTheDependenciesAreNamed() {
        let queue = queue("conditions-after")
        let first = named("first")
        let second = named("second")
        second.addDependency(first)
        second.addCondition(.noFailedDependencies)
        second.addCondition(.predicate("disk space") { _ in true })
        queue.isSuspended = true
        queue.addOperations([first, second], waitUntilFinished: false)
        #expect(lines(of: queue).last == "  ⏸ waiting    BlockOp \"second\" (priority: normal) — for dependencies: BlockOp \"first\" (ready); then conditions: noFailedDependencies, disk space")
        finish(queue)
        #expect(second.isFinished && !second.isCancelled)
    }

    // MARK: Width

    @Test func aReadyOperationOfAFullQueueWaitsForASlot() {
        let gate = Gate(), started = Gate()
        let queue = queue("serial", width: 1)
        let first = named("first") { started.open(); gate.wait() }
        let second = named("second")
        second.queuePriority = .high
        queue.addOperation(first)
        #expect(started.wait())
        queue.addOperation(second)
        #expect(lines(of: queue) == [
            "OpQueue \"serial\" (max concurrent: 1, suspended: no): 2 operations, 1 running",
            "  ▶ executing  BlockOp \"first\" (priority: normal)",
            "  ⏸ ready      BlockOp \"second\" (priority: high) — for a slot: 1 of 1 running",
        ])
        gate.open()
        finish(queue)
    }

    @Test func aQueueOfWidthZeroSaysSo() {
        let queue = queue("closed", width: 0)
        queue.addOperation(named("a"))
        #expect(lines(of: queue).last == "  ⏸ ready      BlockOp \"a\" (priority: normal) — for a slot: max concurrent is 0")
        queue.maxConcurrentOperationCount = OpQueue.defaultMaxConcurrentOperationCount
        finish(queue)
    }

    // MARK: Barriers

    @Test func aBarrierWaitsForEarlierOperationsAndLaterOnesWaitForIt() throws {
        let gate = Gate(), started = Gate()
        let queue = queue("barriers")
        let first = named("first") { started.open(); gate.wait() }
        queue.addOperation(first)
        #expect(started.wait())
        queue.addBarrierBlock {}
        let after = named("after")
        queue.addOperation(after)
        let barrier = try #require(queue.operations.first { $0 !== first && $0 !== after })
        #expect(lines(of: queue) == [
            "OpQueue \"barriers\" (max concurrent: default, suspended: no): 3 operations, 1 running",
            "  ▶ executing  BlockOp \"first\" (priority: normal)",
            "  ⏸ ready      \(barrier) (priority: normal, barrier) — for 1 earlier operation to leave: BlockOp \"first\" (executing)",
            "  ⏸ ready      BlockOp \"after\" (priority: normal) — behind barrier \(barrier) (ready)",
        ])
        gate.open()
        finish(queue)
        #expect(after.isFinished)
    }

    // MARK: Conditions and exclusivity

    @Test func anOperationWhoseConditionsAreBeingEvaluatedSaysWhich() {
        // A synchronous condition runs on the thread that made its operation ready: here, a
        // thread of the test's own that finishes the dependency (no cooperative-pool thread, no
        // worker of the library is held).
        let evaluating = Gate(), release = Gate()
        let queue = queue("evaluating")
        let trigger = named("trigger")
        let checked = named("checked")
        checked.addDependency(trigger)
        checked.addCondition(.predicate("slow check") { _ in
            evaluating.open()
            return release.wait()
        })
        queue.addOperation(checked)
        DispatchQueue(label: "trigger").async { trigger.start() }
        #expect(evaluating.wait())
        #expect(lines(of: queue).last == "  ⏸ ready      BlockOp \"checked\" (priority: normal) — evaluating conditions: slow check")
        release.open()
        finish(queue)
        #expect(checked.isFinished && !checked.isCancelled)
    }

    @Test func anOperationWaitingForACategoryNamesItsHolderOrTheEarlierRequest() {
        let held = "\(token)-y", free = "\(token)-x"
        let gate = Gate(), started = Gate()
        let holding = queue("holding")
        let holder = named("holder") { started.open(); gate.wait() }
        holder.addCondition(.mutuallyExclusive(held))
        holding.addOperation(holder)
        #expect(started.wait())
        let queue = queue("exclusive")
        let both = named("both"), later = named("later")
        both.addCondition(.mutuallyExclusive(free))
        both.addCondition(.mutuallyExclusive(held))
        later.addCondition(.mutuallyExclusive(free))
        // They ask for their categories as the queue starts them: one after the other (two that
        // the queue starts at the same moment ask in either order).
        queue.addOperation(both)
        #expect(eventually(seconds: 5) { both.withState { $0.gate } == .waitingForExclusivity })
        queue.addOperation(later)
        #expect(eventually(seconds: 5) { later.withState { $0.gate } == .waitingForExclusivity })
        let expected = [
            "OpQueue \"exclusive\" (max concurrent: default, suspended: no): 2 operations, 0 running",
            "  ⏸ ready      BlockOp \"both\" (priority: normal) — for exclusivity \"\(held)\": held by BlockOp \"holder\" (executing, in OpQueue \"holding\")",
            "  ⏸ ready      BlockOp \"later\" (priority: normal) — for exclusivity \"\(free)\": asked for earlier by BlockOp \"both\" (ready)",
        ]
        // The worker that started `later` gives its slot back a moment after `later` waits.
        eventually(seconds: 5) { lines(of: queue) == expected }
        #expect(lines(of: queue) == expected)
        gate.open()
        #expect(queueEmpties(holding))
        finish(queue)
        #expect(both.isFinished && later.isFinished)
    }

    // MARK: Groups, cancellation, descriptions

    @Test func anExecutingGroupNamesItsUnfinishedChildren() {
        let gate = Gate(), started = Gate()
        let child = named("child") { started.open(); gate.wait() }
        let group = GroupOp(operations: [child])
        group.name = "group"
        let queue = queue("groups")
        queue.addOperation(group)
        #expect(started.wait())
        #expect(lines(of: queue).last == "  ▶ executing  GroupOp \"group\" (priority: normal) — for 1 unfinished child: BlockOp \"child\" (executing, child of GroupOp \"group\")")
        gate.open()
        finish(queue)
    }

    @Test func aCancelledExecutingOperationIsMarked() {
        let gate = Gate(), started = Gate()
        let queue = queue("cancel")
        let running = named("running") { started.open(); gate.wait() }
        queue.addOperation(running)
        #expect(started.wait())
        running.cancel()
        #expect(lines(of: queue).last == "  ▶ executing  BlockOp \"running\" (priority: normal, cancelled)")
        gate.open()
        finish(queue)
    }

    @Test func descriptionsAreReadOutsideTheQueuesLockAndKeptOnOneLine() {
        let queue = queue("describing")
        queue.isSuspended = true
        queue.addOperation(QueueDescribingOp(queue: queue))
        let multiline = named("two\nlines")
        queue.addOperation(multiline)
        // A description that takes the queue's lock would deadlock a dump made under it.
        let text = LockedBox("")
        let done = Gate()
        DispatchQueue(label: "dump").async {
            text.withLockedValue { $0 = queue.dump() }
            done.open()
        }
        guard done.wait(seconds: 10) else {
            // The queue's lock is stuck: cleaning up would hang too.
            Issue.record("the dump called a description with the queue's lock held")
            return
        }
        let dump = text.withLockedValue { $0 }
        #expect(dump.contains("  ⏸ ready      an operation of a queue holding 2 (priority: normal) — queue is suspended"))
        #expect(dump.contains("BlockOp \"two lines\" (priority: normal)"))
        #expect(dump.split(separator: "\n").count == 3)
        finish(queue)
    }

    // MARK: Consistency

    @Test func aDumpTakenWhileOperationsComeAndGoIsConsistent() {
        let queue = queue("churn", width: 3)
        let count = 300
        var previous: Op?
        var ops: [Op] = []
        for index in 0..<count {
            let op = named("op\(index)") { blockThread(milliseconds: index % 7 == 0 ? 1 : 0) }
            if index % 3 == 0, let previous { op.addDependency(previous) }
            previous = op
            ops.append(op)
        }
        let stop = LockedBox(false)
        let checked = Gate()
        let problems = EventLog<String>()
        DispatchQueue(label: "dumper").async {
            while !stop.withLockedValue({ $0 }) {
                let lines = queue.dump().split(separator: "\n").map(String.init)
                // Header: "…: N operations, R running"; then exactly N member lines.
                guard let header = lines.first, let counts = header.split(separator: ": ").last else {
                    problems.append("no header")
                    continue
                }
                let numbers = counts.split(separator: " ").compactMap { Int($0) }
                if numbers.count != 2 || numbers[0] != lines.count - 1 || numbers[1] > 3 {
                    problems.append(lines.joined(separator: "\n"))
                }
                if lines.dropFirst().filter({ $0.hasPrefix("  ▶ executing") }).count > 3 {
                    problems.append("more executing than the width: \(lines.joined(separator: "\n"))")
                }
            }
            checked.open()
        }
        for start in stride(from: 0, to: count, by: 50) {
            queue.addOperations(Array(ops[start..<(start + 50)]), waitUntilFinished: false)
            queue.addBarrierBlock {}
        }
        #expect(queueEmpties(queue, seconds: 30))
        stop.withLockedValue { $0 = true }
        #expect(checked.wait())
        #expect(problems.all.isEmpty, "\(problems.all.prefix(2))")
        #expect(queue.dump() == "OpQueue \"churn\" (max concurrent: 3, suspended: no): 0 operations, 0 running")
    }
}
