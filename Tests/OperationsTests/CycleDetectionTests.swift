import Testing
import Dispatch
import Synchronization
@testable import Operations

/// Dependency cycles: found and reported at once, left alone while they can be broken (as
/// Foundation lets a program break them), ended only where they would freeze.
@Suite(.offTheCooperativePool) struct CycleDetectionTests {
    /// A prefix that makes this test's operation names (and so its diagnostics) its own.
    let token = uniqueToken("cycle")
    let recorder = DiagnosticsRecorder.shared

    private func named(_ name: String, runs: Bool = false, log: EventLog<String>? = nil) -> BlockOp {
        let op = BlockOp {
            if let log { log.append(name) }
            if !runs { Issue.record("an operation on a cycle must not run") }
        }
        op.name = "\(token)-\(name)"
        return op
    }

    private func described(_ name: String) -> String {
        "BlockOp \"\(token)-\(name)\""
    }

    private var found: [DependencyCycleError] { recorder.cyclesFound(mentioning: token) }
    private var ended: [DependencyCycleError] { recorder.cyclesEnded(mentioning: token) }

    // MARK: Found, reported, left alone

    @Test func closingACycleChangesNothingAndReportsItOnce() {
        let a = named("a"), b = named("b"), c = named("c")
        b.addDependency(a)
        c.addDependency(b)
        a.addDependency(c)   // closes a → c → b → a
        for op in [a, b, c] {
            #expect(!op.isFinished && !op.isCancelled && op.error == nil && !op.isReady)
        }
        #expect(found == [DependencyCycleError(operations: [described("a"), described("c"), described("b")])])
        #expect(ended.isEmpty)
        let report = recorder.reports(mentioning: token).first ?? ""
        #expect(report.hasPrefix("Operations: dependency cycle found: \(described("a")) → \(described("c")) → \(described("b")) → \(described("a"))"))
        #expect(report.contains("Nothing was changed"))
        // Looking again finds the same cycle, which is not reported again.
        a.removeDependency(c)
        a.addDependency(c)
        #expect(found.count == 1)
    }

    /// Foundation's own suite (`test_DependencyCycleBreak`): a cycle added to a queue, then broken
    /// by cancelling one of its operations. Ending the cycle when it was closed made the
    /// `addOperation` calls trap.
    @Test func aQueuedCycleIsBrokenByCancellingOneOfItsOperations() {
        let log = EventLog<String>()
        let op1 = named("op1", runs: true, log: log)
        let op2 = named("op2", runs: true, log: log)
        let op3 = named("op3", log: log)
        op1.addDependency(op2)
        op2.addDependency(op3)
        op3.addDependency(op1)
        let queue = OpQueue()
        queue.addOperation(op1)
        queue.addOperation(op2)
        queue.addOperation(op3)
        #expect(queue.operationCount == 3)
        op3.cancel()
        #expect(queueEmpties(queue))
        #expect(log.all == ["op2", "op1"])
        #expect(op3.isCancelled && op3.error == nil)
        #expect(op1.error == nil && op2.error == nil && !op1.isCancelled && !op2.isCancelled)
        #expect(found.count == 1)
        #expect(ended.isEmpty)
    }

    @Test func cancellingAnOperationOfACycleBeforeQueueingBreaksIt() {
        let log = EventLog<String>()
        let a = named("a", runs: true, log: log), b = named("b", log: log), c = named("c", runs: true, log: log)
        a.addDependency(b)
        b.addDependency(c)
        c.addDependency(a)
        b.cancel()
        let queue = OpQueue()
        queue.addOperations([a, b, c], waitUntilFinished: false)
        #expect(queueEmpties(queue))
        #expect(log.all == ["a", "c"])
        #expect(ended.isEmpty && [a, b, c].allSatisfy { $0.error == nil })
    }

    @Test func removingADependencyBreaksAQueuedCycle() {
        let log = EventLog<String>()
        let a = named("a", runs: true, log: log), b = named("b", runs: true, log: log)
        a.addDependency(b)
        b.addDependency(a)
        let queue = OpQueue()
        queue.addOperations([a, b], waitUntilFinished: false)
        blockThread(milliseconds: 20)
        #expect(!a.isFinished && !b.isFinished)
        a.removeDependency(b)
        #expect(queueEmpties(queue))
        #expect(log.all == ["a", "b"])
        #expect(ended.isEmpty && a.error == nil && b.error == nil)
    }

    @Test func cancelledOperationsDoNotFormACycle() {
        let a = named("a"), b = named("b")
        a.cancel()
        a.addDependency(b)
        b.addDependency(a)
        #expect(found.isEmpty)
        #expect(a.error == nil && b.error == nil)
        #expect(a.isReady && !b.isReady)
        a.removeDependency(b)   // pending operations on a loop keep each other alive
    }

    @Test func aCycleClosedByAForwardEdgeIsFound() {
        let older = named("older")
        let newer = named("newer")
        older.addDependency(newer)   // backward
        newer.addDependency(older)   // forward, closes the cycle
        #expect(found == [DependencyCycleError(operations: [described("older"), described("newer")])])
        #expect(older.error == nil && newer.error == nil)
    }

    // MARK: Ended where it would freeze

    @Test func waitingForAnOperationOfACycleEndsIt() {
        let a = named("a"), b = named("b"), c = named("c")
        b.addDependency(a)
        c.addDependency(b)
        a.addDependency(c)
        b.waitUntilFinished()
        let error = DependencyCycleError(operations: [described("a"), described("c"), described("b")])
        for op in [a, b, c] {
            #expect(op.isFinished && op.isCancelled)
            #expect(op.error as? DependencyCycleError == error)
        }
        #expect(found == [error])
        #expect(ended == [error])
        #expect(recorder.reports(mentioning: token).last == "Operations: \(error)")
    }

    @Test func waitingForAnOperationThatDependsOnACycleEndsTheCycle() {
        let a = named("a"), b = named("b")
        let ran = LockedBox(false)
        let dependent = BlockOp { ran.withLockedValue { $0 = true } }
        dependent.addDependency(a)
        a.addDependency(b)
        b.addDependency(a)
        let queue = OpQueue()
        queue.addOperation(dependent)
        dependent.waitUntilFinished()
        #expect(a.error is DependencyCycleError && b.error is DependencyCycleError)
        #expect(ran.withLockedValue { $0 } && dependent.error == nil && !dependent.isCancelled)
    }

    @Test func waitingForAQueueThatHoldsAnOperationWaitingForACycleEndsTheCycle() {
        // The cycle's operations are in no queue, so no grace period would ever end them: only
        // the wait can.
        let a = named("a"), b = named("b")
        a.addDependency(b)
        b.addDependency(a)
        let queue = OpQueue()
        let dependent = BlockOp {}
        dependent.addDependency(b)
        queue.addOperation(dependent)
        #expect(queueEmpties(queue))
        #expect(a.error is DependencyCycleError && b.error is DependencyCycleError)
        #expect(ended.count == 1)
    }

    @Test func addingOperationsAndWaitingEndsACycleAmongThem() {
        let a = named("a"), b = named("b")
        a.addDependency(b)
        b.addDependency(a)
        let done = Gate()
        DispatchQueue.global().async {
            OpQueue().addOperations([a, b], waitUntilFinished: true)
            done.open()
        }
        #expect(done.wait())
        #expect(a.error is DependencyCycleError && b.error is DependencyCycleError)
    }

    @Test func awaitingAnOperationOfACycleEndsIt() async {
        let a = named("a"), b = named("b")
        a.addDependency(b)
        b.addDependency(a)
        await a.waitUntilFinished()
        #expect(a.error is DependencyCycleError && b.error is DependencyCycleError)
        #expect(ended.count == 1)
    }

    @Test func anAsyncWaitThatSearchedReleasesWhatItWaitedForWhenItEnds() async throws {
        // The wait lasts past the first search (the cycle is found then); the next search would
        // come a second later, and must not keep the operations alive until then.
        let references = (WeakOpBox(), WeakOpBox())
        do {
            let a = named("a"), b = named("b")
            references.0.set(a)
            references.1.set(b)
            a.addDependency(b)
            b.addDependency(a)
            await a.waitUntilFinished()
            #expect(a.error is DependencyCycleError)
        }
        let deadline = ContinuousClock.now + .milliseconds(500)
        while references.0.operation != nil || references.1.operation != nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(references.0.operation == nil && references.1.operation == nil,
                "the operations outlived the wait until its next scheduled search")
    }

    @Test func awaitingAQueueThatHoldsACycleEndsIt() async {
        let a = named("a"), b = named("b")
        a.addDependency(b)
        b.addDependency(a)
        let queue = OpQueue()
        queue.isSuspended = true
        await queue.addOperations([a, b], waitUntilFinished: false)
        queue.isSuspended = false
        await queue.waitUntilAllOperationsAreFinished()
        #expect(a.error is DependencyCycleError && b.error is DependencyCycleError)
        #expect(queue.operationCount == 0)
    }

    @Test func aQueuedCycleIsEndedOnceItStaysUnbrokenForTheGracePeriod() {
        let a = named("a"), b = named("b")
        let other = BlockOp {}
        a.addDependency(b)
        b.addDependency(a)
        let queue = OpQueue()
        queue.addOperations([a, b], waitUntilFinished: false)
        blockThread(milliseconds: 300)   // well within the grace period of 1 second
        #expect(a.error == nil && b.error == nil && !a.isCancelled)
        #expect(found.count == 1 && ended.isEmpty)
        // Nobody waits: the grace period ends it, and the queue goes on.
        #expect(eventually(seconds: 10) { a.isFinished && b.isFinished })
        #expect(a.error is DependencyCycleError && b.error is DependencyCycleError)
        #expect(ended.count == 1)
        queue.addOperation(other)
        #expect(queueEmpties(queue))
        #expect(other.isFinished && !other.isCancelled)
    }

    @Test func theGracePeriodIsOneSecondByDefault() {
        #expect(OpQueue.dependencyCycleGracePeriod == .seconds(1))
    }

    @Test(.oneExitTestAtATime) func theGracePeriodCanBeChanged() async {
        await #expect(processExitsWith: .success) {
            OpQueue.dependencyCycleGracePeriod = .milliseconds(20)
            guard OpQueue.dependencyCycleGracePeriod == .milliseconds(20) else { exitFailing("setting not kept") }
            OpQueue.dependencyCycleGracePeriod = .seconds(-3)
            guard OpQueue.dependencyCycleGracePeriod == .zero else { exitFailing("a negative period is not zero") }
            // Both directions, so that a slow machine cannot make the check pass or fail by
            // accident: a long period keeps a cycle for a while, a short one ends the next soon.
            func cycle() -> (Op, Op) {
                let a = BlockOp {}, b = BlockOp {}
                a.addDependency(b)
                b.addDependency(a)
                let queue = OpQueue()
                queue.addOperation(a)
                queue.addOperation(b)
                return (a, b)
            }
            OpQueue.dependencyCycleGracePeriod = .seconds(600)
            let kept = cycle()
            blockThread(milliseconds: 300)
            guard !kept.0.isFinished && !kept.1.isFinished else { exitFailing("ended before a 600 s grace period") }
            kept.0.cancel()   // breaks it
            OpQueue.dependencyCycleGracePeriod = .milliseconds(20)
            let ended = cycle()
            let start = DispatchTime.now().uptimeNanoseconds
            while !(ended.0.isFinished && ended.1.isFinished) {
                guard DispatchTime.now().uptimeNanoseconds - start < 30_000_000_000 else { exitFailing("not ended within 30 s") }
                blockThread(milliseconds: 1)
            }
            guard ended.0.error is DependencyCycleError else { exitFailing("no cycle error") }
        }
    }

    @Test func theErrorIsObservable() {
        let a = named("a"), b = named("b")
        let seen = EventLog<String>()
        let observation = a.observe(\.error, options: [.new]) { _, change in
            seen.append(String(describing: change.newValue.flatMap { $0 }.map { type(of: $0) }))
        }
        a.addDependency(b)
        b.addDependency(a)
        #expect(seen.all.isEmpty)
        a.waitUntilFinished()
        #expect(seen.all == ["Optional(Operations.DependencyCycleError)"])
        observation.invalidate()
    }

    @Test func operationsOutsideTheCycleAreUnaffected() {
        let queue = OpQueue()
        let a = named("a"), b = named("b")
        let ran = LockedBox(false)
        let outside = BlockOp { ran.withLockedValue { $0 = true } }
        outside.addDependency(a)
        let independent = BlockOp {}
        queue.isSuspended = true
        queue.addOperations([a, b, outside, independent], waitUntilFinished: false)
        a.addDependency(b)
        b.addDependency(a)
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(a.error is DependencyCycleError && b.error is DependencyCycleError)
        #expect(ran.withLockedValue { $0 })
        #expect(outside.error == nil && !outside.isCancelled)
        #expect(independent.error == nil && independent.isFinished)
    }

    @Test func aStalledQueueFindsACycleTooLongForTheQuickSearch() {
        // A cycle longer than the search limits of both sides is not found when its last edge is
        // added; the queue notices that it holds operations that can never become ready.
        let count = 2 * DependencyCycles.searchLimit + 100
        var ops: [Op] = []
        for index in 0..<count {
            let op = named("op\(index)")
            if let previous = ops.last { op.addDependency(previous) }
            ops.append(op)
        }
        ops[0].addDependency(ops[count - 1])
        #expect(found.isEmpty)
        let queue = OpQueue()
        queue.addOperations(ops, waitUntilFinished: false)
        #expect(eventually { found.count == 1 }, "the stalled queue did not report the cycle")
        #expect(found.first?.operations.count == count)
        queue.waitUntilAllOperationsAreFinished()
        #expect(ops.allSatisfy { $0.isFinished && $0.error is DependencyCycleError })
        #expect(found.count == 1 && ended.count == 1)
    }

    /// The grace-period timer and a waiter may end one cycle at the same moment: exactly one of
    /// them ends it, and its end is reported once. The cycles are long so that the check before
    /// the marks (two looks at every edge, after a dump of the queues) leaves both callers time
    /// to pass it, as they could before the end was claimed.
    @Test func aCycleEndedByTwoCallersAtOnceIsEndedAndReportedOnce() {
        let rounds = 100
        for round in 0..<rounds {
            var path: [Op] = []
            for index in 0..<200 {
                let op = named("race\(round)-op\(index)")
                if let previous = path.last { previous.addDependency(op) }
                path.append(op)
            }
            path[path.count - 1].addDependency(path[0])
            let cycle = DependencyCycle(path: path, barrierEdges: Array(repeating: false, count: path.count))
            let results = LockedBox<[Bool]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { _ in
                let ended = DependencyCycles.end(cycle)
                results.withLockedValue { $0.append(ended) }
            }
            #expect(results.withLockedValue { $0.filter { $0 }.count } == 1, "round \(round)")
            #expect(path.allSatisfy { $0.isFinished && $0.error is DependencyCycleError })
        }
        #expect(ended.count == rounds)
    }

    @Test func aQueueWaitingForAnotherQueueIsNotACycle() {
        let waiting = OpQueue()
        let other = OpQueue()
        other.isSuspended = true
        let dependency = BlockOp {}
        let op = BlockOp {}
        op.name = "\(token)-op"
        op.addDependency(dependency)
        other.addOperation(dependency)
        waiting.addOperation(op)
        blockThread(milliseconds: 150)   // longer than the stall check delay
        #expect(!op.isFinished)
        other.isSuspended = false
        waiting.waitUntilAllOperationsAreFinished()
        #expect(recorder.reports(mentioning: token).isEmpty)
        #expect(op.error == nil && !op.isCancelled)
    }

    @Test func explicitCheckFindsCyclesTheAutomaticDetectionLeaves() {
        // A cycle closed among cancelled operations holds nothing back, so nothing reports it;
        // the explicit check still finds it in the declared graph.
        let compile = named("compile"), link = named("link"), test = named("test")
        for op in [compile, link, test] { op.cancel() }
        link.addDependency(compile)
        test.addDependency(link)
        #expect(throws: Never.self) { try Op.checkForDependencyCycles(in: [compile, link, test]) }
        compile.addDependency(test)
        #expect(found.isEmpty)
        do {
            try Op.checkForDependencyCycles(in: [link])
            Issue.record("the check did not throw")
        } catch {
            #expect(error.operations == [described("compile"), described("test"), described("link")])
            #expect(error.description.contains("Remove one of these dependencies"))
        }
        compile.removeDependency(test)   // pending operations on a loop keep each other alive
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
        a.addDependency(b)
        b.addDependency(a)
        let returned = Gate()
        DispatchQueue.global().async {
            a.waitUntilFinished()
            returned.open()
        }
        queue.isSuspended = false
        #expect(returned.wait())
        #expect(a.error is DependencyCycleError)
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
        closing.addDependency(ops[0])
        #expect(found.isEmpty)
        #expect(!closing.isFinished)
        closing.waitUntilFinished()
        #expect(closing.isFinished)
        #expect(closing.error is DependencyCycleError)
        #expect(ops.allSatisfy { $0.error is DependencyCycleError })
        #expect(found.count == 1 && ended.count == 1)
        #expect(keeper.error == nil && newer.error == nil)
    }

    // MARK: Concurrency

    /// A search reads one operation at a time. Edges that come and go on another thread can make
    /// it see a loop that never existed at any one moment: a → b, b → c and c → a, never all
    /// three at once. Neither a report nor an end may follow from that.
    @Test func concurrentDependencyChangesNeverEndHealthyOperations() {
        let a = named("a"), b = named("b"), c = named("c")
        b.addDependency(c)    // always there
        let stop = Atomic(false)
        let toggling = Gate()
        DispatchQueue.global().async {
            while !stop.load(ordering: .relaxed) {
                a.addDependency(b)
                a.removeDependency(b)
                c.addDependency(a)
                c.removeDependency(a)
            }
            toggling.open()
        }
        let deadline = DispatchTime.now().uptimeNanoseconds + 300_000_000
        var searches = 0
        while DispatchTime.now().uptimeNanoseconds < deadline {
            DependencyCycles.endCycles(reachableFrom: a)
            DependencyCycles.endCycles(reachableFrom: c)
            searches += 1
        }
        stop.store(true, ordering: .relaxed)
        #expect(toggling.wait())
        #expect(searches > 0)
        for op in [a, b, c] {
            #expect(op.error == nil && !op.isCancelled && !op.isFinished)
        }
        #expect(found.isEmpty && ended.isEmpty)
    }

    // MARK: Release

    @Test func operationsOfAnEndedCycleAreReleased() {
        let first = WeakOpBox(), second = WeakOpBox()
        let outside = BlockOp {}
        do {
            let a = named("a"), b = named("b")
            a.addDependency(outside)
            a.addDependency(b)
            b.addDependency(a)
            first.set(a)
            second.set(b)
            a.waitUntilFinished()
            // Their dependencies are still listed while they are alive.
            #expect(a.dependencies.count == 2 && a.dependencies[0] === outside && a.dependencies[1] === b)
            #expect(b.dependencies.count == 1 && b.dependencies[0] === a)
        }
        #expect(first.operation == nil && second.operation == nil)
    }

    @Test func operationsOfACycleBrokenByCancellationAreReleased() {
        let references = (WeakOpBox(), WeakOpBox(), WeakOpBox())
        let queue = OpQueue()
        do {
            let op1 = named("op1", runs: true), op2 = named("op2", runs: true), op3 = named("op3")
            op1.addDependency(op2)
            op2.addDependency(op3)
            op3.addDependency(op1)
            references.0.set(op1)
            references.1.set(op2)
            references.2.set(op3)
            queue.addOperations([op1, op2, op3], waitUntilFinished: false)
            op3.cancel()
            #expect(queueEmpties(queue))
        }
        #expect(eventually { references.0.operation == nil }, "op1 is never released")
        #expect(eventually { references.1.operation == nil }, "op2 is never released")
        #expect(eventually { references.2.operation == nil }, "op3 is never released")
    }

    @Test func aFinishedOperationKeepsItsDependenciesThatHaveNone() {
        // A one-operation fan-in, the sink created first: its dependencies are newer, but with
        // no dependencies of their own they are on no loop, and stay held (and listed).
        let sink = BlockOp {}
        let queue = OpQueue()
        do {
            let sources = (0..<20).map { _ in BlockOp {} }
            for source in sources { sink.addDependency(source) }
            queue.addOperations(sources + [sink], waitUntilFinished: false)
            #expect(queueEmpties(queue))
        }
        #expect(sink.dependencies.count == 20)
    }

    @Test func aLoopClosedLaterThroughADependencyHeldStronglyIsReleased() {
        // d holds n strongly (n had no dependency when d finished); n then gets one, which closes
        // a loop d → n → x → d among finished operations.
        let references = (WeakOpBox(), WeakOpBox(), WeakOpBox())
        do {
            let d = BlockOp {}, x = BlockOp {}, n = BlockOp {}
            d.addDependency(n)
            n.start()
            d.start()
            n.addDependency(x)
            x.addDependency(d)
            x.start()
            #expect(d.dependencies == [n] && n.dependencies == [x] && x.dependencies == [d])
            references.0.set(d)
            references.1.set(x)
            references.2.set(n)
        }
        #expect(references.0.operation == nil && references.1.operation == nil && references.2.operation == nil)
    }

    @Test func aLoopClosedAmongFinishedOperationsIsReleased() {
        let first = WeakOpBox(), second = WeakOpBox()
        do {
            let older = BlockOp {}, newer = BlockOp {}
            older.start()
            newer.start()
            newer.addDependency(older)
            older.addDependency(newer)   // listed, though it holds nothing back any more
            #expect(older.dependencies.count == 1 && older.dependencies[0] === newer)
            first.set(older)
            second.set(newer)
        }
        #expect(first.operation == nil && second.operation == nil)
    }
}

/// A queue that stalls looks for cycles among its operations, across queues and through barriers.
@Suite(.offTheCooperativePool) struct StalledQueueCycleTests {
    let token = uniqueToken("stall")
    let recorder = DiagnosticsRecorder.shared

    @Test func aCycleClosedAfterTheQueueStalledIsFound() {
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
        #expect(recorder.cyclesFound(mentioning: token).isEmpty)
        chain[0].addDependency(x)             // closes a cycle longer than the forward search
        chain[0].removeDependency(external)
        #expect(eventually { recorder.cyclesFound(mentioning: token).count == 1 })
        #expect(queueEmpties(queue))
        #expect(x.error is DependencyCycleError)
        #expect(chain.allSatisfy { $0.error is DependencyCycleError })
        #expect(recorder.cyclesEnded(mentioning: token).count == 1)
    }

    @Test func aCycleThroughABarrierIsFoundAndEndedByAWait() {
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
        #expect(eventually { recorder.cyclesFound(mentioning: token).count == 1 })
        #expect(early.error == nil && late.error == nil)
        #expect(queueEmpties(queue))
        #expect(early.error is DependencyCycleError && late.error is DependencyCycleError)
        #expect(recorder.cyclesEnded(mentioning: token).count == 1)
    }
}

/// Exits the exit test's child process with a failure, saying why.
func exitFailing(_ reason: String) -> Never {
    fatalError(reason)
}
