import Dispatch
@testable import Operations
import Testing

/// Where a queue starts its next operations when an `async` body's task finishes one: right
/// there for operations that start briefly, on the worker pool for the others.
///
/// The tests await their queues: a test that blocked its thread would hold one of the few
/// threads of Swift's cooperative pool, which the `async` bodies need.
@Suite("Starting the next operations from an async body's task")
struct AsyncStartsInTaskTests {
    /// An asynchronous operation whose `execute()` notes whether it runs on a pool worker.
    private final class WhereStarted: AsyncOp, @unchecked Sendable {
        // @unchecked Sendable: `onWorker` is written by `execute()` before `finish()`, and read
        // after the queue's wait returns, which orders the two.
        nonisolated(unsafe) var onWorker: Bool?

        override func execute() {
            onWorker = ThreadContext.current.pointee.worker != nil
            finish()
        }
    }

    @Test func anAsyncOperationThatStartsBrieflyStartsInTheTaskThatFinishedTheOneBefore() async {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        // The thread the first one's task finishes it on (its body's last job), and the thread
        // the second one starts on: the same, with no hand-over in between. (The task runs on
        // the library's threads, `OpTaskExecutor`, so both are pool threads.)
        let finishedOn = LockedBox<UInt?>(nil)
        let first = AsyncOp {
            finishedOn.withLockedValue { $0 = UInt(bitPattern: ThreadContext.current) }
        }
        // The library's own `execute()` (it starts a task) starts briefly; observers hear
        // `willExecute` on the thread that starts the operation.
        let second = AsyncOp {}
        let startedOn = LockedBox<UInt?>(nil)
        second.addObserver(BlockObserver(willExecute: { _ in
            startedOn.withLockedValue { $0 = UInt(bitPattern: ThreadContext.current) }
        }))
        await queue.addOperations([first, second], waitUntilFinished: true)
        let finished = finishedOn.withLockedValue { $0 }
        #expect(finished != nil && startedOn.withLockedValue { $0 } == finished)
        #expect(first.isFinished && second.isFinished && second.error == nil)
    }

    @Test func anOverriddenSynchronousExecuteIsHandedToTheWorkerPool() async {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let first = AsyncOp {}
        let second = WhereStarted()
        await queue.addOperations([first, second], waitUntilFinished: true)
        #expect(second.onWorker == true)
        #expect(first.isFinished && second.isFinished && second.error == nil)
    }

    @Test func aSynchronousOperationIsHandedToTheWorkerPool() async {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let first = AsyncOp {}
        let onWorker = LockedBox<Bool?>(nil)
        let second = BlockOp { onWorker.withLockedValue { $0 = ThreadContext.current.pointee.worker != nil } }
        let third = WhereStarted()   // after the hand-over, the pool's drainer goes on
        await queue.addOperations([first, second, third], waitUntilFinished: true)
        #expect(onWorker.withLockedValue { $0 } == true)
        #expect(third.onWorker == true)
    }

    @Test func aGroupIsHandedToTheWorkerPool() async {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let first = AsyncOp {}
        let onWorker = LockedBox<Bool?>(nil)
        let child = BlockOp { onWorker.withLockedValue { $0 = ThreadContext.current.pointee.worker != nil } }
        let group = GroupOp(operations: [child])
        await queue.addOperations([first, group], waitUntilFinished: true)
        #expect(onWorker.withLockedValue { $0 } == true)
    }

    @Test func aQueueOnADispatchQueueStartsTheNextOnesThere() async {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let underlying = DispatchQueue(label: "underlying")
        queue.underlyingQueue = underlying
        let first = AsyncOp {}
        let onUnderlying = LockedBox<Bool?>(nil)
        let key = DispatchSpecificKey<Bool>()
        underlying.setSpecific(key: key, value: true)
        let second = BlockOp { onUnderlying.withLockedValue { $0 = DispatchQueue.getSpecific(key: key) == true } }
        await queue.addOperations([first, second], waitUntilFinished: true)
        #expect(onUnderlying.withLockedValue { $0 } == true)
    }

    @Test func manyAsyncOperationsOnAWidthOneQueueRunInOrderOneAtATime() async {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let order = EventLog<Int>()
        let meter = ConcurrencyMeter()
        let operations = (0..<2_000).map { index in
            AsyncOp {
                meter.enter()
                order.append(index)
                if index % 100 == 0 { await Task.yield() }
                meter.leave()
            }
        }
        await queue.addOperations(operations, waitUntilFinished: true)
        #expect(order.all == Array(0..<2_000))
        #expect(meter.peak == 1)
    }
}
