#if ServiceLifecycle
import Testing
import ServiceLifecycle
import ServiceLifecycleTestKit
@testable import Operations

/// With the `ServiceLifecycle` trait, `OpQueueService` shuts its queue down gracefully when its
/// service group does.
@Suite struct OpQueueServiceTests {
    @Test func runReturnsAfterTheGracefulShutdownHavingShutTheQueueDown() async throws {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let release = Gate()
        let started = Gate()
        let running = BlockOp { started.open(); release.wait() }
        let waiting = BlockOp {}
        await queue.addOperations([running, waiting], waitUntilFinished: false)
        #expect(await started.waitOffThread())
        let service = OpQueueService(queue: queue, gracePeriod: .seconds(600))
        try await testGracefulShutdown { trigger in
            let run = Task { try await service.run() }
            #expect(!queue.isClosed)
            trigger.triggerGracefulShutdown()
            #expect(await eventuallyAsync { queue.isClosed })
            release.open()
            try await run.value
        }
        // Both finished within the grace period; the queue takes no more.
        #expect(running.isFinished && !running.isCancelled)
        #expect(waiting.isFinished && !waiting.isCancelled)
        #expect(!queue.tryAddOperation(BlockOp {}))
    }

    @Test func aCancelledServiceShutsTheQueueDownWithoutAGracePeriod() async throws {
        let queue = OpQueue()
        queue.isSuspended = true
        let waiting = BlockOp {}
        queue.addOperation(waiting)
        let service = OpQueueService(queue: queue, gracePeriod: .seconds(3600))
        let run = Task { try await service.run() }
        run.cancel()
        try await run.value
        #expect(waiting.isCancelled && waiting.isFinished)
        #expect(waiting.error as? OpQueueClosedError != nil)
    }

    @Test func theServiceRunsInAServiceGroup() async throws {
        let queue = OpQueue()
        let group = ServiceGroup(services: [OpQueueService(queue: queue, gracePeriod: .seconds(1))],
                                 logger: .init(label: "test"))
        let run = Task { try await group.run() }
        #expect(await eventuallyAsync { !queue.isClosed })
        await group.triggerGracefulShutdown()
        try await run.value
        #expect(queue.isClosed)
    }
}
#endif
