import Testing
import Dispatch
@testable import Operations

private struct ResizeFailed: Error, Equatable {}

@Suite struct AsyncBodyTests {
    @Test func closureBodyRunsAndFinishesTheOperation() async {
        let ran = LockedBox(false)
        let op = AsyncOp {
            try await Task.sleep(for: .milliseconds(5))
            ran.withLockedValue { $0 = true }
        }
        let queue = OpQueue()
        queue.addOperation(op)
        await op.waitUntilFinished()
        #expect(ran.withLockedValue { $0 })
        #expect(op.isFinished && op.error == nil)
        #expect(op.isAsynchronous)
    }

    @Test func anAsyncOpThatAwaitsHoldsAWidthOneQueue() async {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let log = EventLog<String>()
        let slow = AsyncOp {
            log.append("slow started")
            try await Task.sleep(for: .milliseconds(100))
            log.append("slow finished")
        }
        let next = BlockOp { log.append("next ran") }
        await queue.addOperations([slow, next], waitUntilFinished: true)
        #expect(log.all == ["slow started", "slow finished", "next ran"])
    }

    @Test func subclassHookRunsAsync() async throws {
        final class Fetch: AsyncOp, @unchecked Sendable {
            // @unchecked Sendable: `fetched` is written by the body and read after the operation
            // finished, which orders the two.
            var fetched = 0
            override func execute() async throws {
                try await Task.sleep(for: .milliseconds(1))
                fetched = 42
            }
        }
        let op = Fetch()
        let queue = OpQueue()
        await queue.addOperations([op], waitUntilFinished: true)
        #expect(op.fetched == 42)
    }

    @Test func addOperationReturnsAnOperationWhoseValueCanBeAwaited() async throws {
        let queue = OpQueue()
        let value = try await queue.addOperation { () async throws -> Int in
            try await Task.sleep(for: .milliseconds(1))
            return 21 * 2
        }.value
        #expect(value == 42)
    }

    @Test func aThrownErrorReachesTheAwaitingCallerAndTheDependents() async {
        let queue = OpQueue()
        let resize = queue.addOperation { () async throws -> Int in throw ResizeFailed() }
        let seenByDependent = LockedBox<(any Error)?>(nil)
        let dependent = RecordingOp { op in
            seenByDependent.withLockedValue { $0 = op.dependencies.first?.error }
        }
        dependent.addDependency(resize)
        queue.addOperation(dependent)
        await #expect(throws: ResizeFailed.self) { try await resize.value }
        await dependent.waitUntilFinished()
        #expect(resize.error is ResizeFailed)
        #expect(seenByDependent.withLockedValue { $0 } is ResizeFailed)
    }

    @Test func callbackStyleCanFinishWithAnError() async {
        final class Failing: AsyncOp, @unchecked Sendable {
            // @unchecked Sendable: no state of its own.
            override func execute() {
                DispatchQueue.global().async { self.finish(throwing: ResizeFailed()) }
            }
        }
        let op = Failing()
        await OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(op.error is ResizeFailed)
        #expect(op.isFinished)
    }

    @Test func theTaskInheritsTheQualityOfServiceAsItsPriority() async {
        let seen = LockedBox<TaskPriority?>(nil)
        let op = AsyncOp { seen.withLockedValue { $0 = Task.currentPriority } }
        op.qualityOfService = .utility
        await OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(seen.withLockedValue { $0 } == .utility)

        let queue = OpQueue()
        queue.qualityOfService = .userInitiated
        let priority = try? await queue.addOperation { Task.currentPriority }.value
        #expect(priority == .userInitiated)
    }

    @Test func theQueuePriorityStepsTheTaskPriorityWithinItsClass() async {
        func priority(_ qualityOfService: DispatchQoS.QoSClass, _ queuePriority: Op.QueuePriority) async -> TaskPriority? {
            let seen = LockedBox<TaskPriority?>(nil)
            let op = AsyncOp { seen.withLockedValue { $0 = Task.currentPriority } }
            op.qualityOfService = qualityOfService
            op.queuePriority = queuePriority
            await OpQueue().addOperations([op], waitUntilFinished: true)
            return seen.withLockedValue { $0 }
        }
        let utility = TaskPriority.utility.rawValue
        #expect(await priority(.utility, .veryHigh)?.rawValue == utility + 1)
        #expect(await priority(.utility, .high)?.rawValue == utility + 1)
        #expect(await priority(.utility, .normal) == .utility)
        #expect(await priority(.utility, .low)?.rawValue == utility - 1)
        #expect(await priority(.utility, .veryLow)?.rawValue == utility - 1)
        // Each step stays within the class the executor runs the jobs at.
        for qualityOfService: DispatchQoS.QoSClass in [.background, .utility, .default, .userInitiated, .userInteractive] {
            for queuePriority in Op.QueuePriority.allCases {
                let stepped = TaskPriority(qualityOfService, queuePriority: queuePriority)!
                let expected: DispatchQoS.QoSClass = qualityOfService == .userInteractive ? .userInitiated : qualityOfService
                #expect(OpTaskExecutor.qualityOfService(of: JobPriority(rawValue: stepped.rawValue)) == expected,
                        "\(qualityOfService) at \(queuePriority)")
            }
        }
    }

    @Test func anAsyncOpCancelledBeforeItStartsNeverRunsItsBody() async {
        let ran = LockedBox(false)
        let op = AsyncOp { ran.withLockedValue { $0 = true } }
        op.cancel()
        await OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(!ran.withLockedValue { $0 })
        #expect(op.isFinished && op.isCancelled)
    }

    @Test func valueOfAnOperationCancelledBeforeItRanThrowsCancellationError() async {
        let queue = OpQueue()
        queue.isSuspended = true
        let op = queue.addOperation { () async -> Int in 1 }
        op.cancel()
        queue.isSuspended = false
        await #expect(throws: CancellationError.self) { try await op.value }
    }
}
