import Testing
import Dispatch
@testable import Operations

/// `close()`, `isClosed` and `shutdown(gracePeriod:clock:)`: a queue that takes no new work, and
/// a graceful shutdown that cancels what is left after a grace period.
@Suite struct ClosingAndShutdownTests {
    @Test func aClosedQueueTurnsFoundationStyleAddsAwayAsCancelledWithoutRunningThem() async {
        let queue = OpQueue()
        queue.name = "closed-adds"
        queue.close()
        #expect(queue.isClosed)
        let ran = EventLog<String>()
        let op = BlockOp { ran.append("body") }
        let completed = Gate()
        op.completionBlock = { completed.open() }
        queue.addOperation(op)
        #expect(op.isFinished && op.isCancelled)
        #expect(op.error as? OpQueueClosedError == OpQueueClosedError(queue: "OpQueue \"closed-adds\""))
        #expect(await completed.waitOffThread())
        queue.addOperation { ran.append("block") }
        queue.addBarrierBlock { ran.append("barrier") }
        let batch = [BlockOp { ran.append("batch") }, BlockOp { ran.append("batch") }]
        await queue.addOperations(batch, waitUntilFinished: true)   // returns: they finished
        #expect(batch.allSatisfy { $0.isCancelled && $0.isFinished })
        #expect(ran.all.isEmpty)
        #expect(queue.operationCount == 0)
        #expect(String(describing: op.error!).contains("is closed"))
    }

    @Test func aClosedQueueTurnsAwayAnOperationWhoseDependencyIsUnfinished() async {
        let queue = OpQueue()
        queue.close()
        let dependency = BlockOp {}
        let op = BlockOp {}
        op.addDependency(dependency)
        queue.addOperation(op)
        #expect(op.isFinished && op.isCancelled)
        #expect(!dependency.isFinished)
    }

    @Test func closingLetsTheOperationsInsideFinishAndRefusesTheRest() async throws {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let release = Gate()
        let started = Gate()
        let running = BlockOp { started.open(); release.wait() }
        let waiting = BlockOp {}
        await queue.addOperations([running, waiting], waitUntilFinished: false)
        #expect(await started.waitOffThread())
        queue.close()
        let refused = BlockOp {}
        #expect(!queue.tryAddOperation(refused))
        await #expect(throws: OpQueueClosedError.self) { try await queue.enqueue(refused) }
        #expect(!refused.isCancelled && !refused.isFinished)
        release.open()
        await queue.waitUntilAllOperationsAreFinished()
        #expect(!running.isCancelled && !waiting.isCancelled && waiting.isFinished)
    }

    @Test func closingEndsTheWaitOfEveryCallerWaitingForRoom() async {
        let queue = OpQueue()
        queue.isSuspended = true
        queue.maxPendingOperationCount = 0
        let ops = (0..<3).map { _ in BlockOp {} }
        let adders = ops.map { op in Task { try await queue.enqueue(op) } }
        #expect(await eventuallyAsync { queue.admissionWaiterCount == 3 })
        queue.close()
        for adder in adders {
            await #expect(throws: OpQueueClosedError.self) { try await adder.value }
        }
        #expect(ops.allSatisfy { !$0.isFinished && !$0.isCancelled })
    }

    @Test func shutdownWaitsForTheOperationsToFinishWithinTheGracePeriod() async {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 2
        let hold = Gate()
        let count = EventLog<Int>()
        // The first two hold both slots until the shutdown has begun, so that all 20 are in the
        // queue when it does (it counts those).
        queue.addOperation(BlockOp { hold.wait(); count.append(0) })
        queue.addOperation(BlockOp { hold.wait(); count.append(1) })
        for index in 2..<20 {
            queue.addOperation(BlockOp { blockThread(milliseconds: 1); count.append(index) })
        }
        let clock = ManualClock()
        let shutdown = Task { await queue.shutdown(gracePeriod: .seconds(600), clock: clock) }
        #expect(await clock.waitForSleepers(1))   // the shutdown began: closed, members counted
        hold.open()
        hold.open()
        let report = await shutdown.value
        #expect(report == OpQueue.ShutdownReport(finished: 20, cancelled: 0))
        #expect(count.count == 20)
        #expect(queue.isClosed && queue.operationCount == 0)
    }

    @Test func shutdownCancelsWhatIsLeftWhenTheGracePeriodPasses() async {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let started = Gate()
        let running = BlockOp {}
        running.addExecutionBlock { [unowned running] in
            started.open()
            // Runs until cancelled, as well-behaved long work does.
            while !running.isCancelled { blockThread(milliseconds: 1) }
        }
        let waiting = (0..<3).map { _ in BlockOp {} }
        await queue.addOperations([running] + waiting, waitUntilFinished: false)
        #expect(await started.waitOffThread())
        let report = await queue.shutdown(gracePeriod: .zero)
        #expect(report == OpQueue.ShutdownReport(finished: 0, cancelled: 4))
        for op in [running] + waiting {
            #expect(op.isCancelled && op.isFinished)
            #expect(op.error as? OpQueueClosedError != nil)
        }
    }

    @Test func shutdownCountsOperationsThatFinishedInTimeAndThoseItCancelled() async {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let hold = Gate()
        let done = BlockOp {}
        let blocker = BlockOp { hold.wait() }
        let dependency = BlockOp {}   // never added: its dependent waits
        let stuck = BlockOp {}
        stuck.addDependency(dependency)
        await queue.addOperations([done, blocker, stuck], waitUntilFinished: false)
        await done.waitUntilFinished()
        #expect(await eventuallyAsync { queue.operationCount == 2 })
        let clock = ManualClock()
        let shutdown = Task { await queue.shutdown(gracePeriod: .seconds(30), clock: clock) }
        #expect(await eventuallyAsync { clock.sleeperCount == 1 })   // the shutdown began
        hold.open()
        await blocker.waitUntilFinished()
        clock.advance(by: .seconds(30))
        let report = await shutdown.value
        // `done` had left the queue before the shutdown began: not counted; `stuck` never
        // became ready.
        #expect(report == OpQueue.ShutdownReport(finished: 1, cancelled: 1))
        #expect(!blocker.isCancelled)
        #expect(stuck.isCancelled && !dependency.isFinished)
    }

    @Test func shutdownOfASuspendedQueueReturns() async {
        let queue = OpQueue()
        queue.isSuspended = true
        let ran = EventLog<Int>()
        await queue.addOperations((0..<5).map { index in BlockOp { ran.append(index) } }, waitUntilFinished: false)
        let report = await queue.shutdown(gracePeriod: .zero)
        #expect(report == OpQueue.ShutdownReport(finished: 0, cancelled: 5))
        #expect(ran.all.isEmpty)
        #expect(queue.operationCount == 0)
    }

    @Test func shutdownOfAnEmptyQueueReturnsAtOnce() async {
        let queue = OpQueue()
        let report = await queue.shutdown(gracePeriod: .seconds(3600))
        #expect(report == OpQueue.ShutdownReport(finished: 0, cancelled: 0))
        #expect(queue.isClosed)
    }

    @Test func shutdownMeasuresItsGracePeriodOnTheClockItIsGiven() async {
        let clock = ManualClock()
        let queue = OpQueue()
        let started = Gate()
        let running = BlockOp {}
        running.addExecutionBlock { [unowned running] in
            started.open()
            while !running.isCancelled { blockThread(milliseconds: 1) }
        }
        queue.addOperation(running)
        #expect(await started.waitOffThread())
        let shutdown = Task { await queue.shutdown(gracePeriod: .seconds(30), clock: clock) }
        #expect(await eventuallyAsync { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(29))
        #expect(!running.isCancelled)
        clock.advance(by: .seconds(1))
        let report = await shutdown.value
        #expect(report == OpQueue.ShutdownReport(finished: 0, cancelled: 1))
    }
}
