import Testing
import Dispatch
@testable import Operations

/// Waits called from code that runs while the library holds something up (an observer handler,
/// a completion block, a state-stream consumer) either return or trap; they never hang.
@Suite struct ObserverWaitTests {
    /// Runs `body` on another thread; returns `false` if it did not return within the hang guard.
    private func returns(seconds: Int = 10, _ body: @escaping @Sendable () -> Void) -> Bool {
        let done = Gate()
        DispatchQueue.global().async {
            body()
            done.open()
        }
        return done.wait(seconds: seconds)
    }

    // MARK: Waits that return

    @Test(arguments: ["queue", "start", "cancelled", "asynchronous"])
    func anIsFinishedObserverWaitingForItsOperationReturns(_ how: String) {
        // The asynchronous operation finishes from a worker thread of the library: this test
        // blocks its own thread, which may be one of the few of Swift's cooperative pool.
        let op: Op = how == "asynchronous" ? FinishingOnAWorker() : BlockOp {}
        let waited = Gate()
        let observation = op.observe(\.isFinished) { op, _ in
            op.waitUntilFinished()
            waited.open()
        }
        #expect(returns {
            switch how {
            case "start":
                op.start()
            case "cancelled":
                op.cancel()
                op.start()
            default:
                OpQueue().addOperation(op)
            }
        })
        #expect(waited.wait(), "the wait in the observer did not return")
        observation.invalidate()
    }

    @Test func anIsCancelledObserverWaitingForItsWaitingOperationReturns() {
        // The operation is put on its queue's ready list before the observer hears of the
        // cancellation, so the queue finishes it while the observer waits.
        let queue = OpQueue()
        let blocker = BlockOp {}
        let op = BlockOp { Issue.record("a cancelled operation ran") }
        op.addDependency(blocker)
        queue.addOperation(op)
        let waited = Gate()
        let observation = op.observe(\.isCancelled) { op, _ in
            op.waitUntilFinished()
            waited.open()
        }
        #expect(returns { op.cancel() })
        #expect(waited.wait())
        #expect(op.isFinished)
        observation.invalidate()
    }

    @Test func anIsReadyObserverWaitingForItsOperationReturns() {
        let queue = OpQueue()
        let dependency = BlockOp {}
        let op = BlockOp {}
        op.addDependency(dependency)
        let waited = Gate()
        let observation = op.observe(\.isReady, options: [.new]) { op, change in
            guard change.newValue == true else { return }
            op.waitUntilFinished()
            waited.open()
        }
        queue.addOperation(op)
        queue.addOperation(dependency)
        #expect(waited.wait())
        #expect(queueEmpties(queue))
        observation.invalidate()
    }

    @Test func aQueuePriorityObserverWaitingForItsOperationReturns() {
        let queue = OpQueue()
        queue.isSuspended = true
        let op = BlockOp {}
        queue.addOperation(op)
        let waited = Gate()
        let observation = op.observe(\.queuePriority) { op, _ in
            op.waitUntilFinished()
            waited.open()
        }
        let changed = Gate()
        DispatchQueue.global().async {
            op.queuePriority = .high   // its observer waits until the queue runs the operation
            changed.open()
        }
        blockThread(milliseconds: 20)
        queue.isSuspended = false
        #expect(changed.wait())
        #expect(waited.wait())
        observation.invalidate()
    }

    @Test(arguments: [1, OpQueue.defaultMaxConcurrentOperationCount])
    func aQueueObserverWaitingForTheQueueReturns(width: Int) {
        // The drainer that finished an operation delivers its leaving before it takes the next
        // one, having given the slot back and asked for another drainer.
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = width
        let calls = EventLog<Int>()
        let draining = LockedBox(false)
        let observation = queue.observe(\.operationCount, options: [.new]) { queue, change in
            // Only for operations leaving: while they are added, the queue is suspended.
            guard draining.withLockedValue({ $0 }) else { return }
            calls.append(change.newValue!)
            queue.waitUntilAllOperationsAreFinished()
        }
        queue.isSuspended = true
        for _ in 0..<20 { queue.addOperation { blockThread(milliseconds: 1) } }
        draining.withLockedValue { $0 = true }
        queue.isSuspended = false
        #expect(queueEmpties(queue))
        #expect(eventually { calls.all.last == 0 })
        observation.invalidate()
    }

    @Test func aQueueEventConsumerWaitingForTheFinishedOperationReturns() async {
        let queue = OpQueue()
        let events = queue.events()
        let op = BlockOp {}
        queue.addOperation(op)
        for await event in events {
            guard case .finished(let finished) = event else { continue }
            await finished.waitUntilFinished()
            #expect(finished === op)
            break
        }
    }

    @Test func aFinishedOperationObserverOfTheQueueWaitingForTheOperationReturns() {
        // A queue's observers learn of an operation leaving before it completes: waiting for it
        // from there returns at once, since it reads as finished.
        let queue = OpQueue()
        let op = BlockOp {}
        let waited = Gate()
        let observation = queue.observe(\.operationCount, options: [.new]) { _, change in
            guard change.newValue == 0 else { return }
            op.waitUntilFinished()
            waited.open()
        }
        queue.addOperation(op)
        #expect(waited.wait())
        observation.invalidate()
    }

    @Test func aStateStreamConsumerWaitingForItsOperationAndQueueReturns() async {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let gate = Gate()
        let op = BlockOp { gate.wait() }
        let changes = op.changes
        queue.addOperation(op)
        var seen: [Op.StateChange] = []
        for await change in changes {
            seen.append(change)
            switch change {
            case .executing:
                gate.open()
                await queue.waitUntilAllOperationsAreFinished()
            case .finished:
                await op.waitUntilFinished()
            case .ready, .cancelled:
                break
            }
        }
        #expect(seen.contains(.executing) && seen.last == .finished)
        #expect(op.isFinished && queue.operationCount == 0)
    }

    @Test func aCompletionBlockWaitingForItsOperationReturns() {
        let op = BlockOp {}
        let waited = Gate()
        op.completionBlock = {
            op.waitUntilFinished()
            waited.open()
        }
        OpQueue().addOperation(op)
        #expect(waited.wait())
    }

    @Test func anObserverWaitingForAnUnrelatedOperationWaits() {
        let other = BlockOp { blockThread(milliseconds: 5) }
        let op = BlockOp {}
        let waited = Gate()
        let observation = op.observe(\.isFinished) { _, _ in
            other.waitUntilFinished()
            waited.open()
        }
        let queue = OpQueue()
        queue.addOperation(op)
        queue.addOperation(other)
        #expect(waited.wait())
        #expect(other.isFinished)
        observation.invalidate()
    }

    // MARK: Waits that trap

    @Test(.oneExitTestAtATime) func anIsExecutingObserverWaitingForItsQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.name = "observed"
            let op = BlockOp {}
            op.name = "watched"
            let observation = op.observe(\.isExecuting, options: [.new]) { _, change in
                if change.newValue == true { queue.waitUntilAllOperationsAreFinished() }
            }
            queue.addOperation(op)
            blockThread(milliseconds: 5_000)
            observation.invalidate()
        }
        expectStandardError(of: result, toContain: ["waitUntilAllOperationsAreFinished()", "OpQueue \"observed\"", "observer handler of BlockOp \"watched\"", "cannot empty"])
    }

    @Test(.oneExitTestAtATime) func anIsExecutingObserverWaitingForItsOperationTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = BlockOp {}
            op.name = "watched"
            let observation = op.observe(\.isExecuting, options: [.new]) { op, change in
                if change.newValue == true { op.waitUntilFinished() }
            }
            OpQueue().addOperation(op)
            blockThread(milliseconds: 5_000)
            observation.invalidate()
        }
        expectStandardError(of: result, toContain: ["waitUntilFinished()", "BlockOp \"watched\"", "observer handler", "never finish"])
    }

    @Test(.oneExitTestAtATime) func anIsFinishedObserverWaitingForADependentTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = BlockOp {}
            op.name = "first"
            let dependent = BlockOp {}
            dependent.name = "second"
            dependent.addDependency(op)
            let observation = op.observe(\.isFinished) { _, _ in dependent.waitUntilFinished() }
            let queue = OpQueue()
            queue.addOperation(dependent)
            queue.addOperation(op)
            blockThread(milliseconds: 5_000)
            observation.invalidate()
        }
        expectStandardError(of: result, toContain: ["BlockOp \"second\"", "observer handler of BlockOp \"first\"", "waits for BlockOp \"first\""])
    }

    @Test(.oneExitTestAtATime) func anIsFinishedObserverWaitingForAnOperationBehindItInAWidthOneQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.name = "serial"
            queue.maxConcurrentOperationCount = 1
            let op = BlockOp {}
            op.name = "first"
            let behind = BlockOp {}
            behind.name = "behind"
            let observation = op.observe(\.isFinished) { _, _ in behind.waitUntilFinished() }
            queue.isSuspended = true
            queue.addOperation(op)
            queue.addOperation(behind)
            queue.isSuspended = false
            blockThread(milliseconds: 5_000)
            observation.invalidate()
        }
        expectStandardError(of: result, toContain: ["BlockOp \"behind\"", "observer handler of BlockOp \"first\"", "width 1"])
    }

    @Test func anIsReadyObserverOfADependentWaitingForASiblingReturns() {
        // Every dependent is told and scheduled (with a drainer of its own) before any observer
        // of theirs runs.
        let queue = OpQueue()
        let root = BlockOp {}
        let left = BlockOp {}
        let right = BlockOp {}
        left.addDependency(root)
        right.addDependency(root)
        let waited = Gate()
        let observation = left.observe(\.isReady, options: [.new]) { _, change in
            guard change.newValue == true else { return }
            right.waitUntilFinished()
            waited.open()
        }
        queue.addOperations([left, right], waitUntilFinished: false)
        queue.addOperation(root)
        #expect(waited.wait())
        #expect(queueEmpties(queue))
        observation.invalidate()
    }

    @Test(.oneExitTestAtATime) func anIsReadyObserverOfADependentWaitingForASiblingInAWidthOneQueueTraps() async {
        // The operation that finished keeps the only slot until its dependents' observers return.
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.name = "serial"
            queue.maxConcurrentOperationCount = 1
            let root = BlockOp {}
            root.name = "root"
            let left = BlockOp {}
            let right = BlockOp {}
            right.name = "right"
            left.addDependency(root)
            right.addDependency(root)
            let observation = left.observe(\.isReady, options: [.new]) { _, change in
                if change.newValue == true { right.waitUntilFinished() }
            }
            queue.isSuspended = true
            queue.addOperation(left)
            queue.addOperation(right)
            queue.addOperation(root)
            queue.isSuspended = false
            blockThread(milliseconds: 5_000)
            observation.invalidate()
        }
        expectStandardError(of: result, toContain: ["BlockOp \"right\"", "dependent of BlockOp \"root\"", "width 1"])
    }
}

/// An asynchronous operation whose work finishes on a worker thread of the library.
private final class FinishingOnAWorker: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: no state of its own.
    override func execute() {
        WorkerPool.shared.submit { self.finish() }
    }
}
