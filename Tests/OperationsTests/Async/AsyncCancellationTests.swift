import Testing
import Dispatch
@testable import Operations

@Suite struct AsyncCancellationTests {
    @Test func cancellingTheOperationCancelsItsTask() async {
        let started = Gate()
        let sawCancellation = LockedBox(false)
        let op = AsyncOp {
            started.open()
            do {
                try await Task.sleep(for: .seconds(30))
            } catch is CancellationError {
                sawCancellation.withLockedValue { $0 = true }
                throw CancellationError()
            }
        }
        let queue = OpQueue()
        queue.addOperation(op)
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { started.wait(); continuation.resume() }
        }
        op.cancel()
        await op.waitUntilFinished()
        #expect(sawCancellation.withLockedValue { $0 })
        #expect(op.error is CancellationError)
    }

    @Test func cancellingAQueueCancelsTheTasksOfItsRunningAsyncOperations() async {
        let queue = OpQueue()
        let started = ConcurrencyMeter()
        let ops = (0..<4).map { _ in
            AsyncOp {
                started.enter()
                while !Task.isCancelled {
                    try await Task.sleep(for: .milliseconds(1))
                }
                try Task.checkCancellation()
            }
        }
        await queue.addOperations(ops, waitUntilFinished: false)
        while started.total < 4 { try? await Task.sleep(for: .milliseconds(1)) }
        queue.cancelAllOperations()
        await queue.waitUntilAllOperationsAreFinished()
        #expect(ops.allSatisfy { $0.isFinished && $0.isCancelled && $0.error is CancellationError })
    }

    @Test func cancellingTheAwaitingTaskDoesNotCancelTheOperation() async throws {
        let release = Gate()
        let queue = OpQueue()
        let op = queue.addOperation { () async -> Int in
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async { release.wait(); continuation.resume() }
            }
            return 7
        }
        let waiter = Task { try await op.value }
        waiter.cancel()
        try? await Task.sleep(for: .milliseconds(20))
        #expect(!op.isCancelled)
        release.open()
        #expect(try await waiter.value == 7)
    }

    @Test func cancellingTheAwaitingTaskCancelsTheOperationWhenAsked() async {
        let queue = OpQueue()
        let started = Gate()
        let op = queue.addOperation { () async throws -> Int in
            started.open()
            try await Task.sleep(for: .seconds(30))
            return 7
        }
        let waiter = Task { try await op.value(cancellingOnTaskCancellation: true) }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { started.wait(); continuation.resume() }
        }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(op.isCancelled)
    }

    @Test func waitUntilFinishedCanPassCancellationOn() async {
        let never = BlockOp {}
        let op = BlockOp {}
        op.addDependency(never)
        let queue = OpQueue()
        queue.addOperation(op)
        let waiter = Task { await op.waitUntilFinished(cancellingOnTaskCancellation: true) }
        try? await Task.sleep(for: .milliseconds(5))
        waiter.cancel()
        await waiter.value
        #expect(op.isCancelled && op.isFinished)
    }
}
