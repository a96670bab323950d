import Testing
import Dispatch
@testable import Operations

/// `maxPendingOperationCount`, `pendingOperationCount`, `tryAddOperation(_:)` and `enqueue(_:)`:
/// a bound on the waiting work that the adders that ask for room respect, with backpressure.
@Suite struct AdmissionControlTests {
    @Test func pendingOperationCountCountsTheOperationsAddedAndNotYetStarted() async {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let release = Gate()
        let started = Gate()
        let first = BlockOp { started.open(); release.wait() }
        queue.addOperation(first)
        #expect(await started.waitOffThread())
        let waiting = (0..<3).map { _ in BlockOp {} }
        waiting.forEach(queue.addOperation)
        #expect(queue.pendingOperationCount == 3)
        #expect(queue.operationCount == 4)
        release.open()
        await queue.waitUntilAllOperationsAreFinished()
        #expect(queue.pendingOperationCount == 0)
    }

    @Test func tryAddOperationRefusesWhenFullAndLeavesTheOperationUntouched() async {
        let queue = OpQueue()
        queue.isSuspended = true
        queue.maxPendingOperationCount = 2
        #expect(queue.tryAddOperation(BlockOp {}))
        #expect(queue.tryAddOperation(BlockOp {}))
        let refused = BlockOp {}
        #expect(!queue.tryAddOperation(refused))
        #expect(queue.operationCount == 2)
        #expect(!refused.isCancelled && !refused.isFinished)
        // Untouched: another queue takes it and runs it.
        let other = OpQueue()
        other.addOperation(refused)
        await refused.waitUntilFinished()
        #expect(!refused.isCancelled)
        queue.isSuspended = false
        await queue.waitUntilAllOperationsAreFinished()
        #expect(queue.tryAddOperation(BlockOp {}))
        await queue.waitUntilAllOperationsAreFinished()
    }

    @Test func foundationStyleAddsAreNeverRefusedButLeaveLessRoom() async {
        let queue = OpQueue()
        queue.isSuspended = true
        queue.maxPendingOperationCount = 1
        queue.addOperation(BlockOp {})
        queue.addOperation {}
        await queue.addOperations([BlockOp {}, BlockOp {}], waitUntilFinished: false)
        queue.addBarrierBlock {}
        #expect(queue.operationCount == 5)
        #expect(queue.pendingOperationCount == 5)
        #expect(!queue.tryAddOperation(BlockOp {}))
        queue.isSuspended = false
        await queue.waitUntilAllOperationsAreFinished()
        #expect(queue.pendingOperationCount == 0)
    }

    @Test func raisingTheBoundLetsWaitingAddersIn() async throws {
        let queue = OpQueue()
        queue.isSuspended = true
        queue.maxPendingOperationCount = 0
        let op = BlockOp {}
        let adder = Task { try await queue.enqueue(op) }
        #expect(await eventuallyAsync { queue.admissionWaiterCount == 1 })
        queue.maxPendingOperationCount = 1
        try await adder.value
        #expect(queue.operations.contains { $0 === op })
        queue.isSuspended = false
        await queue.waitUntilAllOperationsAreFinished()
    }

    @Test func enqueueWaitsForRoomAndServesWaitersFirstComeFirstServed() async throws {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        queue.maxPendingOperationCount = 1
        let release = Gate()
        let started = Gate()
        queue.addOperation(BlockOp { started.open(); release.wait() })
        #expect(await started.waitOffThread())
        queue.addOperation(BlockOp {})   // pending: the queue is full
        let order = EventLog<String>()
        var adders: [Task<Void, any Error>] = []
        for name in ["a", "b", "c"] {
            let op = BlockOp { order.append(name) }
            adders.append(Task { try await queue.enqueue(op) })
            let waiting = adders.count
            #expect(await eventuallyAsync { queue.admissionWaiterCount == waiting })
        }
        // A non-waiting adder does not jump the line.
        #expect(!queue.tryAddOperation(BlockOp {}))
        release.open()
        for adder in adders { try await adder.value }
        await queue.waitUntilAllOperationsAreFinished()
        #expect(order.all == ["a", "b", "c"])
    }

    @Test func enqueueLeavesAtOnceWhenItsTaskIsCancelledAndTheOperationIsUntouched() async {
        let queue = OpQueue()
        queue.isSuspended = true
        queue.maxPendingOperationCount = 1
        queue.addOperation(BlockOp {})
        let op = BlockOp {}
        let adder = Task { try await queue.enqueue(op) }
        #expect(await eventuallyAsync { queue.admissionWaiterCount == 1 })
        let behind = BlockOp {}
        let next = Task { try await queue.enqueue(behind) }
        #expect(await eventuallyAsync { queue.admissionWaiterCount == 2 })
        adder.cancel()
        await #expect(throws: CancellationError.self) { try await adder.value }
        #expect(!op.isCancelled && !op.isFinished && !queue.operations.contains { $0 === op })
        #expect(queue.admissionWaiterCount == 1)
        queue.isSuspended = false
        // The waiter behind the cancelled one gets its room.
        await #expect(throws: Never.self) { try await next.value }
        await queue.waitUntilAllOperationsAreFinished()
        #expect(behind.isFinished)
    }

    @Test func enqueueInACancelledTaskThrowsWithoutAdding() async {
        let queue = OpQueue()
        let op = BlockOp {}
        let adder = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await queue.enqueue(op)
        }
        await #expect(throws: CancellationError.self) { try await adder.value }
        #expect(queue.operationCount == 0 && !op.isFinished)
    }

    @Test func operationsWaitingForTheirCategoriesCountAsPending() async {
        let category = uniqueToken("admission")
        let holderQueue = OpQueue()
        let release = Gate()
        let started = Gate()
        let holder = BlockOp { started.open(); release.wait() }
        holder.addCondition(.mutuallyExclusive(category))
        holderQueue.addOperation(holder)
        #expect(await started.waitOffThread())
        let queue = OpQueue()
        queue.maxPendingOperationCount = 3
        for _ in 0..<3 {
            let op = BlockOp {}
            op.addCondition(.mutuallyExclusive(category))
            #expect(queue.tryAddOperation(op))
        }
        // They were taken to start, and gave their starts back to wait for the category. An
        // operation records that it waits before the drainer that took it counts it pending again
        // (with its next acquisition of the queue's lock), so the count is waited for too.
        #expect(await eventuallyAsync { queue.operations.allSatisfy(waitsForItsCategory) })
        #expect(await eventuallyAsync { queue.pendingOperationCount == 3 })
        #expect(!queue.tryAddOperation(BlockOp {}))
        release.open()
        await queue.waitUntilAllOperationsAreFinished()
        await holderQueue.waitUntilAllOperationsAreFinished()
        #expect(queue.pendingOperationCount == 0)
    }

    @Test func aLongLivedQueueKeepsItsPendingCountExactUnderLoad() async {
        // A server's queue is never empty: producers keep it full for a while, with some
        // operations waiting for a category, and the count never drifts.
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 2
        queue.maxPendingOperationCount = 16
        let category = uniqueToken("busy")
        let total = 2_000
        await withTaskGroup(of: Void.self) { group in
            for producer in 0..<4 {
                group.addTask {
                    for index in 0..<(total / 4) {
                        let op = BlockOp {}
                        if (index + producer) % 5 == 0 { op.addCondition(.mutuallyExclusive(category)) }
                        try? await queue.enqueue(op)
                        // A start given back (to wait for the category) is pending again: at
                        // most one per slot above the bound.
                        #expect(queue.pendingOperationCount <= 16 + 2)
                    }
                }
            }
        }
        await queue.waitUntilAllOperationsAreFinished()
        #expect(queue.pendingOperationCount == 0)
        #expect(queue.admissionWaiterCount == 0)
    }

    @Test func withdrawnWaitersDoNotPileUpBehindAWaitingOne() async {
        let queue = OpQueue()
        queue.isSuspended = true
        queue.maxPendingOperationCount = 0
        let front = Task { try await queue.enqueue(BlockOp {}) }
        #expect(await eventuallyAsync { queue.admissionWaiterCount == 1 })
        for round in 1...2 {
            let count = 500 * round
            let adders = (0..<count).map { _ in Task { try await queue.enqueue(BlockOp {}) } }
            #expect(await eventuallyAsync { queue.admissionWaiterCount == count + 1 })
            adders.forEach { $0.cancel() }
            for adder in adders { _ = try? await adder.value }
            #expect(queue.admissionWaiterCount == 1)
            // Memory follows the waiters, not how many ever waited.
            #expect(queue.admissionLineLength <= 64)
        }
        queue.close()
        await #expect(throws: OpQueueClosedError.self) { try await front.value }
    }

    @Test(.oneExitTestAtATime) func tryingToAddAnOperationThatIsInAnotherQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let first = OpQueue()
            first.isSuspended = true
            let op = BlockOp {}
            op.name = "twice"
            first.addOperation(op)
            _ = OpQueue().tryAddOperation(op)
        }
        expectStandardError(of: result, toContain: ["\"twice\""])
    }

    @Test(.oneExitTestAtATime) func aNegativeBoundTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.name = "bounded"
            queue.maxPendingOperationCount = -1
        }
        expectStandardError(of: result, toContain: ["\"bounded\"", "maxPendingOperationCount", "Use 0 or more"])
    }
}
