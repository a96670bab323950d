import Testing
import Dispatch
@testable import Operations

/// The reports of a stalled queue's dependency cycle and the traps of waits that could never
/// return end with the lines of the dump that show what holds each operation involved.
@Suite(.offTheCooperativePool) struct DumpDiagnosticsTests {
    /// A prefix that makes this test's operation names (and so its diagnostics) its own.
    let token = uniqueToken("dumpdiag")
    let recorder = DiagnosticsRecorder.shared

    private func named(_ name: String) -> BlockOp {
        let op = BlockOp {}
        op.name = "\(token)-\(name)"
        return op
    }

    private var found: [DependencyCycleError] { recorder.cyclesFound(mentioning: token) }
    private var ended: [DependencyCycleError] { recorder.cyclesEnded(mentioning: token) }

    @Test func aCycleThatStallsAQueueIsReportedWithTheQueuesDump() throws {
        // a waits for c, which waits behind the barrier, which waits for a: only the stalled
        // queue's search (which sees barriers) finds it.
        let a = named("a"), c = named("c")
        a.addDependency(c)
        let queue = OpQueue()
        queue.name = "\(token)-queue"
        queue.addOperation(a)
        queue.addBarrierBlock {}
        queue.addOperation(c)
        #expect(eventually { found.count == 1 }, "the stalled queue did not report the cycle")
        let barrier = try #require(queue.operations.first { $0 !== a && $0 !== c })
        let expected = [
            "OpQueue \"\(token)-queue\" (max concurrent: default, suspended: no): 3 operations, 0 running",
            "  ⏸ waiting    BlockOp \"\(token)-a\" (priority: normal) — for dependencies: BlockOp \"\(token)-c\" (ready)",
            "  ⏸ ready      \(barrier) (priority: normal, barrier) — for 1 earlier operation to leave: BlockOp \"\(token)-a\" (waiting)",
            "  ⏸ ready      BlockOp \"\(token)-c\" (priority: normal) — behind barrier \(barrier) (ready)",
        ].joined(separator: "\n")
        #expect(found.first?.queueDump == expected)
        let report = try #require(recorder.reports(mentioning: token).first)
        #expect(report.hasPrefix("Operations: dependency cycle found: "))
        #expect(report.hasSuffix("OpQueue.dependencyCycleGracePeriod.\n" + expected))
        // Left unbroken, it is ended after the grace period; that report shows the dump too.
        #expect(eventually(seconds: 20) { ended.count == 1 })
        #expect(ended.first?.queueDump == expected)
        #expect(recorder.reports(mentioning: token).last?.hasSuffix("\n" + expected) == true)
        #expect(queueEmpties(queue))
        #expect(a.error is DependencyCycleError && c.error is DependencyCycleError)
        #expect((a.error as? DependencyCycleError)?.queueDump == nil, "the operations' error carries no dump")
    }

    @Test func aCycleOutsideQueuesIsReportedWithoutADump() {
        let a = named("a"), b = named("b")
        a.addDependency(b)
        b.addDependency(a)
        #expect(found.count == 1)
        #expect(found.first?.queueDump == nil)
        #expect(recorder.reports(mentioning: token).first?.contains("\n") == false)
        a.removeDependency(b)   // pending operations on a loop keep each other alive
    }

    @Test func aCycleClosedInASuspendedQueueShowsWhatHoldsEachOperation() {
        let a = named("a"), b = named("b")
        let queue = OpQueue()
        queue.name = "\(token)-suspended"
        queue.isSuspended = true
        queue.addOperations([a, b], waitUntilFinished: false)
        a.addDependency(b)
        b.addDependency(a)
        #expect(found.count == 1)
        let dump = found.first?.queueDump ?? ""
        #expect(dump.contains("OpQueue \"\(token)-suspended\" (max concurrent: default, suspended: yes): 2 operations, 0 running"))
        #expect(dump.contains("  ⏸ waiting    BlockOp \"\(token)-a\" (priority: normal) — for dependencies: BlockOp \"\(token)-b\" (waiting)"))
        #expect(dump.contains("  ⏸ waiting    BlockOp \"\(token)-b\" (priority: normal) — for dependencies: BlockOp \"\(token)-a\" (waiting)"))
        a.cancel()   // breaks it (unless the grace period ended it already, on a very slow run)
        queue.isSuspended = false
        #expect(queueEmpties(queue))
    }

    @Test func aMessageShowsAtMostTwentyLinesPerQueue() {
        let queue = OpQueue()
        queue.name = "\(token)-many"
        queue.isSuspended = true
        let ops = (0..<30).map { named("op\($0)") }
        queue.addOperations(ops, waitUntilFinished: false)
        let section = QueueDump.section(for: ops) ?? ""
        let lines = section.split(separator: "\n")
        #expect(lines.count == 1 + QueueDump.messageLineLimit + 1)
        #expect(lines.last == "  … 10 other operations not shown")
        #expect(QueueDump.section(for: [named("loose")]) == nil)
        queue.isSuspended = false
        #expect(queueEmpties(queue))
    }

    // MARK: Waits that could never return

    // The messages of waits that could never return end with dump lines too: WaitDeadlockTests
    // checks them with each trap.
}
