import Dispatch
@testable import Operations
import Testing

/// Where the synchronous `execute()` of an ``AsyncOp`` subclass runs: where `main()` runs, on a
/// thread of the worker pool (or the queue's underlying queue), never on a thread of Swift's
/// cooperative pool, also when the operation before it finished in the task of its `async` body.
@Suite("AsyncOp: where an overridden synchronous execute() runs")
struct SynchronousExecuteThreadTests {
    /// A callback-style operation that notes whether its `execute()` runs on a pool worker.
    private final class CallbackOp: AsyncOp, @unchecked Sendable {
        // @unchecked Sendable: `onWorker` is a locked box.
        let onWorker = LockedBox<Bool?>(nil)

        override func execute() {
            onWorker.withLockedValue { $0 = ThreadContext.current.pointee.worker != nil }
            finish()
        }
    }

    /// A subclass that overrides only the `async` body, keeping the library's `execute()`.
    private final class AsyncBodyOp: AsyncOp, @unchecked Sendable {
        override func execute() async throws {}
    }

    @Test func anOverriddenSynchronousExecuteRunsOnAWorkerAfterAnAsyncBodyFinishedTheOneBefore() async {
        // Each callback operation follows an `async` body that finishes in its own task, where
        // the queue used to start the next operation.
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        var operations: [Op] = []
        var callbacks: [CallbackOp] = []
        for index in 0..<40 {
            operations.append(index.isMultiple(of: 2) ? AsyncOp {} : AsyncBodyOp())
            let callback = CallbackOp()
            callbacks.append(callback)
            operations.append(callback)
        }
        await queue.addOperations(operations, waitUntilFinished: true)
        let places = callbacks.map { $0.onWorker.withLockedValue { $0 } }
        #expect(places.allSatisfy { $0 == true }, "ran on a worker: \(places)")
    }

    @Test func anOverriddenSynchronousExecuteRunsOnTheUnderlyingQueue() async {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let underlying = DispatchQueue(label: "underlying")
        let key = DispatchSpecificKey<Bool>()
        underlying.setSpecific(key: key, value: true)
        queue.underlyingQueue = underlying
        let onUnderlying = LockedBox<[Bool]>([])
        final class Recording: AsyncOp, @unchecked Sendable {
            // @unchecked Sendable: both members are immutable.
            let record: @Sendable () -> Void
            init(_ record: @escaping @Sendable () -> Void) {
                self.record = record
                super.init()
            }
            override func execute() {
                record()
                finish()
            }
        }
        var operations: [Op] = []
        for _ in 0..<20 {
            operations.append(AsyncOp {})
            operations.append(Recording { onUnderlying.withLockedValue { $0.append(DispatchQueue.getSpecific(key: key) == true) } })
        }
        await queue.addOperations(operations, waitUntilFinished: true)
        let places = onUnderlying.withLockedValue { $0 }
        #expect(places.count == 20 && places.allSatisfy { $0 }, "on the underlying queue: \(places)")
    }

    @Test func onlyTheLibrarysOwnExecuteStartsBriefly() {
        #expect(AsyncOp {}.startsBriefly)
        #expect(AsyncBlockOp { 1 }.startsBriefly)
        #expect(DelayOp(for: .seconds(1)).startsBriefly)
        #expect(!CallbackOp().startsBriefly)
        // Overriding only the `async` body keeps the library's `execute()`, but the library
        // cannot tell from outside the module: it starts it on a worker too.
        #expect(!AsyncBodyOp().startsBriefly)
        #expect(!GroupOp(operations: []).startsBriefly)
    }
}
