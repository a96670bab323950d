#if Metrics
import Testing
import MetricsTestKit
import CoreMetrics
@testable import Operations

/// With the `Metrics` trait, operations report their counts, waits, durations and the queue's
/// pending and running operations to swift-metrics, by queue name.
@Suite struct OpMetricsTests {
    /// One factory for the whole run (tests run in parallel; each uses queues of its own names).
    static let metrics: TestMetrics = {
        let metrics = TestMetrics()
        OpMetrics.factory = metrics
        return metrics
    }()

    private func namedQueue(_ label: String) -> (OpQueue, [(String, String)]) {
        _ = Self.metrics
        let queue = OpQueue()
        let name = uniqueToken(label)
        queue.name = name
        return (queue, [("queue", name)])
    }

    @Test func queuesReportEnqueuedStartedAndFinishedOperationsByOutcome() async throws {
        let (queue, dimensions) = namedQueue("counts")
        queue.maxConcurrentOperationCount = 1
        struct Failure: Error {}
        let succeeded = BlockOp {}
        let failed = ResultOp<Int> { throw Failure() }
        let cancelled = BlockOp {}
        cancelled.cancel()
        await queue.addOperations([succeeded, failed, cancelled], waitUntilFinished: true)
        await queue.waitUntilAllOperationsAreFinished()
        let metrics = Self.metrics
        #expect(try metrics.expectCounter("operations.enqueued", dimensions).totalValue == 3)
        #expect(try metrics.expectCounter("operations.started", dimensions).totalValue == 2)
        #expect(try metrics.expectCounter("operations.finished", dimensions + [("outcome", "succeeded")]).totalValue == 1)
        #expect(try metrics.expectCounter("operations.finished", dimensions + [("outcome", "failed")]).totalValue == 1)
        #expect(try metrics.expectCounter("operations.finished", dimensions + [("outcome", "cancelled")]).totalValue == 1)
    }

    @Test func timersMeasureTheWaitAndTheDuration() async throws {
        let (queue, dimensions) = namedQueue("timers")
        queue.isSuspended = true
        let op = BlockOp { blockThread(milliseconds: 20) }
        queue.addOperation(op)
        try? await Task.sleep(for: .milliseconds(20))   // waits in the suspended queue
        queue.isSuspended = false
        await queue.waitUntilAllOperationsAreFinished()
        let wait = try Self.metrics.expectTimer("operations.wait", dimensions)
        let duration = try Self.metrics.expectTimer("operations.duration", dimensions)
        #expect(wait.values.count == 1 && duration.values.count == 1)
        #expect(wait.values[0] >= 20_000_000)
        #expect(duration.values[0] >= 20_000_000)
    }

    @Test func gaugesFollowThePendingAndRunningOperations() async throws {
        let (queue, dimensions) = namedQueue("gauges")
        queue.maxConcurrentOperationCount = 1
        let release = Gate()
        let started = Gate()
        queue.addOperation(BlockOp { started.open(); release.wait() })
        #expect(await started.waitOffThread())
        await queue.addOperations([BlockOp {}, BlockOp {}], waitUntilFinished: false)
        let pending = try Self.metrics.expectGauge("operations.pending", dimensions)
        #expect(pending.lastValue == 2)
        release.open()
        await queue.waitUntilAllOperationsAreFinished()
        #expect(await eventuallyAsync { (try? Self.metrics.expectGauge("operations.running", dimensions).lastValue) == 0 })
        #expect(pending.lastValue == 0)
    }

    @Test func operationsStartedByHandAreNotCounted() throws {
        _ = Self.metrics
        let name = uniqueToken("by-hand")
        let op = BlockOp {}
        op.name = name
        op.start()
        #expect(Self.metrics.counters.allSatisfy { counter in !counter.dimensions.contains { $0.1 == name } })
    }
}
#endif
