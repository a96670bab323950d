import Testing
import Dispatch
@testable import Operations

@Suite struct CycleDetectionTests {
    /// A prefix that makes this test's operation names (and so its diagnostics) its own.
    let token = uniqueToken("cycle")

    /// Runs `body` and returns the diagnostics reported about this test's operations.
    private func collectingDiagnostics(_ body: () -> Void) -> [String] {
        let recorder = DiagnosticsRecorder.shared
        body()
        return recorder.reports(mentioning: token)
    }

    private func named(_ name: String) -> BlockOp {
        let op = BlockOp { Issue.record("an operation on a cycle must not run") }
        op.name = "\(token)-\(name)"
        return op
    }

    private func described(_ name: String) -> String {
        "BlockOp \"\(token)-\(name)\""
    }

    @Test func closingACycleEndsEveryOperationOnItWithAnErrorNamingThem() {
        let a = named("a"), b = named("b"), c = named("c")
        let diagnostics = collectingDiagnostics {
            b.addDependency(a)
            c.addDependency(b)
            a.addDependency(c)   // closes a → c → b → a
        }
        for op in [a, b, c] {
            #expect(op.isFinished)
            #expect(op.isCancelled)
            let error = op.error as? DependencyCycleError
            #expect(error != nil)
            #expect(Set(error?.operations ?? []) == [described("a"), described("b"), described("c")])
        }
        let cycle = (a.error as? DependencyCycleError)?.operations ?? []
        #expect(cycle == [described("a"), described("c"), described("b")])
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?.contains("Dependency cycle: \(described("a")) → \(described("c")) → \(described("b")) → \(described("a"))") == true)
    }

    @Test func operationsOutsideTheCycleAreUnaffected() {
        let queue = OpQueue()
        let a = named("a"), b = named("b")
        let ran = LockedBox(false)
        let outside = BlockOp { ran.withLockedValue { $0 = true } }
        outside.addDependency(a)
        let independent = BlockOp {}
        _ = collectingDiagnostics {
            queue.isSuspended = true
            queue.addOperations([a, b, outside, independent], waitUntilFinished: false)
            a.addDependency(b)
            b.addDependency(a)
            queue.isSuspended = false
            queue.waitUntilAllOperationsAreFinished()
        }
        #expect(a.error is DependencyCycleError && b.error is DependencyCycleError)
        #expect(ran.withLockedValue { $0 })
        #expect(outside.error == nil && !outside.isCancelled)
        #expect(independent.error == nil && independent.isFinished)
    }

    @Test func theErrorIsObservable() {
        let a = named("a"), b = named("b")
        let seen = EventLog<String>()
        let token = a.observe(\.error, options: [.new]) { _, change in
            seen.append(String(describing: change.newValue.flatMap { $0 }.map { type(of: $0) }))
        }
        _ = collectingDiagnostics {
            a.addDependency(b)
            b.addDependency(a)
        }
        #expect(seen.all == ["Optional(Operations.DependencyCycleError)"])
        token.invalidate()
    }

    @Test func serialNumbersFollowCreationOrder() {
        // Dependencies created before their dependents ("forward" edges) never close a cycle on
        // their own, which is what makes the check on a new edge free for them.
        let first = BlockOp {}
        let second = BlockOp {}
        #expect(first.serial < second.serial)
    }

    @Test func aCycleClosedByAForwardEdgeIsFound() {
        let older = named("older")
        let newer = named("newer")
        let diagnostics = collectingDiagnostics {
            older.addDependency(newer)   // backward
            newer.addDependency(older)   // forward, closes the cycle
        }
        #expect(older.error is DependencyCycleError && newer.error is DependencyCycleError)
        #expect(diagnostics.count == 1)
    }

    @Test func aStalledQueueFindsACycleTooLongForTheQuickSearch() {
        // A cycle longer than the search limit is not caught when its last edge is added; the
        // queue notices that it holds operations that can never become ready.
        let count = DependencyCycles.searchLimit + 100
        var ops: [Op] = []
        for index in 0..<count {
            let op = named("op\(index)")
            if let previous = ops.last { op.addDependency(previous) }
            ops.append(op)
        }
        let diagnostics = collectingDiagnostics {
            ops[0].addDependency(ops[count - 1])
            #expect(ops.allSatisfy { !$0.isFinished })
            let queue = OpQueue()
            queue.addOperations(ops, waitUntilFinished: false)
            queue.waitUntilAllOperationsAreFinished()
        }
        #expect(ops.allSatisfy { $0.isFinished && $0.error is DependencyCycleError })
        #expect(diagnostics.count == 1)
        #expect((ops[0].error as? DependencyCycleError)?.operations.count == count)
    }

    @Test func aQueueWaitingForAnotherQueueIsNotACycle() {
        let waiting = OpQueue()
        let other = OpQueue()
        other.isSuspended = true
        let dependency = BlockOp {}
        let op = BlockOp {}
        op.addDependency(dependency)
        let diagnostics = collectingDiagnostics {
            other.addOperation(dependency)
            waiting.addOperation(op)
            blockThread(milliseconds: 150)   // longer than the stall check delay
            #expect(!op.isFinished)
            other.isSuspended = false
            waiting.waitUntilAllOperationsAreFinished()
        }
        #expect(diagnostics.isEmpty)
        #expect(op.error == nil && !op.isCancelled)
    }

    @Test func cancelledOperationsDoNotFormACycle() {
        let a = named("a"), b = named("b")
        a.cancel()
        let diagnostics = collectingDiagnostics {
            a.addDependency(b)
            b.addDependency(a)
        }
        #expect(diagnostics.isEmpty)
        #expect(a.error == nil && b.error == nil)
        #expect(a.isReady && !b.isReady)
    }

    @Test func explicitCheckFindsCyclesTheAutomaticDetectionLeaves() {
        // A cycle closed among cancelled operations holds nothing back, so nothing ends it
        // automatically; the explicit check still reports it in the declared graph.
        let compile = named("compile"), link = named("link"), test = named("test")
        for op in [compile, link, test] { op.cancel() }
        link.addDependency(compile)
        test.addDependency(link)
        #expect(throws: Never.self) { try Op.checkForDependencyCycles(in: [compile, link, test]) }
        let diagnostics = collectingDiagnostics {
            compile.addDependency(test)
        }
        #expect(diagnostics.isEmpty)
        do {
            try Op.checkForDependencyCycles(in: [link])
            Issue.record("the check did not throw")
        } catch {
            #expect(Set(error.operations) == [described("compile"), described("link"), described("test")])
            #expect(error.description.contains("Remove one of these dependencies"))
        }
    }

    @Test func operationsEndedOnACycleLoseTheDependenciesBetweenThemAndAreReleased() {
        final class WeakBox: @unchecked Sendable {
            // @unchecked Sendable: used from the test's thread only.
            weak var object: Op?
        }
        let first = WeakBox(), second = WeakBox()
        let outside = BlockOp {}
        _ = collectingDiagnostics {
            let a = named("a"), b = named("b")
            a.addDependency(outside)
            a.addDependency(b)
            b.addDependency(a)
            #expect(a.dependencies.count == 1 && a.dependencies[0] === outside)
            #expect(b.dependencies.isEmpty)
            first.object = a
            second.object = b
        }
        #expect(first.object == nil && second.object == nil)
    }

    @Test func explicitCheckHandlesLongChains() throws {
        // Deep enough that a recursive search would exhaust a worker thread's stack.
        var ops: [Op] = []
        for _ in 0..<30_000 {
            let op = BlockOp {}
            if let previous = ops.last { op.addDependency(previous) }
            ops.append(op)
        }
        try Op.checkForDependencyCycles(in: [ops.last!])
    }

    @Test func waitersOfAnOperationOnACycleReturn() {
        let a = named("a"), b = named("b")
        let queue = OpQueue()
        queue.isSuspended = true
        queue.addOperations([a, b], waitUntilFinished: false)
        let returned = Gate()
        DispatchQueue.global().async {
            a.waitUntilFinished()
            returned.open()
        }
        _ = collectingDiagnostics {
            a.addDependency(b)
            b.addDependency(a)
            queue.isSuspended = false
            #expect(returned.wait())
        }
    }

    @Test func waitingForAnOperationOnAnUndetectedCycleEndsTheCycle() {
        // Build a long cycle through a forward edge while a backward edge exists elsewhere: the
        // quick search gives up, and the wait finds it.
        let keeper = named("keeper")
        let newer = named("newer")
        keeper.addDependency(newer)   // one backward edge, pending

        var ops: [Op] = []
        for index in 0..<(DependencyCycles.forwardSearchLimit * 4) {
            let op = named("link\(index)")
            if let last = ops.last { last.addDependency(op) }   // backward edges: each waits for a newer one
            ops.append(op)
        }
        let closing = named("closing")
        ops.last!.addDependency(closing)
        // `closing` is newest; making it wait for the first (oldest) is a forward edge that closes
        // a cycle longer than the forward search limit.
        let collected = collectingDiagnostics {
            closing.addDependency(ops[0])
            #expect(!closing.isFinished)
            closing.waitUntilFinished()
        }
        #expect(closing.isFinished)
        #expect(closing.error is DependencyCycleError)
        #expect(ops.allSatisfy { $0.error is DependencyCycleError })
        #expect(collected.count == 1)
        _ = keeper
    }
}

@Suite struct StalledQueueCycleTests {
    let token = uniqueToken("stall")

    @Test func aCycleClosedAfterTheQueueStalledIsFound() {
        let recorder = DiagnosticsRecorder.shared

        let queue = OpQueue()
        let external = BlockOp {}   // never started: the queue stalls legitimately first
        let x = BlockOp {}
        x.name = "\(token)-x"
        var chain: [Op] = []
        for index in 0..<40 {
            let op = BlockOp {}
            op.name = "\(token)-\(index)"
            if let last = chain.last { op.addDependency(last) }
            chain.append(op)
        }
        x.addDependency(chain.last!)          // backward edge
        chain[0].addDependency(external)
        queue.addOperations([x] + chain, waitUntilFinished: false)
        blockThread(milliseconds: 150)        // the stall check runs and finds no cycle
        #expect(!x.isFinished)
        chain[0].addDependency(x)             // closes a cycle longer than the quick search
        chain[0].removeDependency(external)
        #expect(queueEmpties(queue))
        #expect(x.error is DependencyCycleError)
        #expect(chain.allSatisfy { $0.error is DependencyCycleError })
        #expect(recorder.reports(mentioning: token).count == 1)
    }

    @Test func aCycleThroughABarrierIsFound() {
        let recorder = DiagnosticsRecorder.shared

        // `early` was added before the barrier, `late` after it; early waits for late, which waits
        // for the barrier, which waits for early.
        let queue = OpQueue()
        queue.isSuspended = true
        let early = BlockOp { Issue.record("an operation on a cycle must not run") }
        early.name = "\(token)-early"
        queue.addOperation(early)
        queue.addBarrierBlock { Issue.record("a barrier on a cycle must not run") }
        let late = BlockOp { Issue.record("an operation on a cycle must not run") }
        late.name = "\(token)-late"
        queue.addOperation(late)
        early.addDependency(late)
        queue.isSuspended = false
        #expect(queueEmpties(queue))
        #expect(early.error is DependencyCycleError && late.error is DependencyCycleError)
        #expect(recorder.reports(mentioning: token).count == 1)
    }
}
