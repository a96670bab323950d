import Dispatch
import Operations

/// Operations with `async` bodies, against the usual ways of running async work: a FIFO queue
/// (an `AsyncStream` drained by one `Task`, the core of swift-async-queue's `FIFOQueue`, whose
/// own workload is in the `AsyncQueuePeer` target, built only with `SWIFT_ASYNC_QUEUE_PATH`) and a
/// `TaskGroup`.
extension Workloads {
    // MARK: 15. Async operations on a width-1 queue

    /// `count` operations with an empty `async` body on a width-1 queue.
    public static func oursAsyncSerial(_ count: Int) {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        queue.addOperations((0..<count).map { _ in AsyncOp {} }, waitUntilFinished: true)
    }

    /// `count` empty `async` jobs through a FIFO queue: an `AsyncStream` of jobs drained in order
    /// by one long-lived `Task`, which the submitter awaits.
    public static func fifoAsyncSerial(_ count: Int) async {
        let (jobs, submit) = AsyncStream.makeStream(of: (@Sendable () async -> Void).self, bufferingPolicy: .unbounded)
        let drainer = Task {
            for await job in jobs { await job() }
        }
        for _ in 0..<count {
            submit.yield {}
        }
        submit.finish()
        await drainer.value
    }

    /// The same operations waited for once, by a barrier that signals a semaphore, instead of by
    /// `addOperations(_:waitUntilFinished: true)`, which waits for each operation in turn (and so
    /// may block and be woken once per operation).
    public static func oursAsyncSerialOneWait(_ count: Int) {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        addAndWaitOnce((0..<count).map { _ in AsyncOp {} }, to: queue)
    }

    /// The same operations added from `async` code and awaited with
    /// `await queue.waitUntilAllOperationsAreFinished()` (one continuation), as the peers await.
    public static func oursAsyncSerialAwaited(_ count: Int) async {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        await queue.addOperations((0..<count).map { _ in AsyncOp {} }, waitUntilFinished: false)
        await queue.waitUntilAllOperationsAreFinished()
    }

    /// Adds `operations` to `queue` and waits once, for a barrier added after them.
    static func addAndWaitOnce(_ operations: [Op], to queue: OpQueue) {
        let done = DispatchSemaphore(value: 0)
        queue.addOperations(operations, waitUntilFinished: false)
        queue.addBarrierBlock { done.signal() }
        done.wait()
    }

    // MARK: 16. Async operations on a default queue

    /// `count` operations with an empty `async` body on a queue of default width.
    public static func oursAsyncIndependent(_ count: Int) {
        let queue = OpQueue()
        queue.addOperations((0..<count).map { _ in AsyncOp {} }, waitUntilFinished: true)
    }

    /// The same operations waited for once, by a barrier (see ``oursAsyncSerialOneWait(_:)``).
    public static func oursAsyncIndependentOneWait(_ count: Int) {
        addAndWaitOnce((0..<count).map { _ in AsyncOp {} }, to: OpQueue())
    }

    /// The same operations added from `async` code and awaited with
    /// `await queue.waitUntilAllOperationsAreFinished()` (one continuation).
    public static func oursAsyncIndependentAwaited(_ count: Int) async {
        let queue = OpQueue()
        await queue.addOperations((0..<count).map { _ in AsyncOp {} }, waitUntilFinished: false)
        await queue.waitUntilAllOperationsAreFinished()
    }

    /// `count` empty child tasks in a task group.
    public static func taskGroupAsyncIndependent(_ count: Int) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<count { group.addTask {} }
        }
    }

    // MARK: 17. Async operations that sleep, eight at a time

    /// `count` operations that each sleep `milliseconds` in their `async` body, on a width-8 queue.
    public static func oursAsyncSleeping(_ count: Int, milliseconds: Int, width: Int) {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = width
        let operations = (0..<count).map { _ in
            AsyncOp { try await Task.sleep(for: .milliseconds(milliseconds)) }
        }
        queue.addOperations(operations, waitUntilFinished: true)
    }

    /// The same sleeps in a task group that keeps at most `width` children at once.
    public static func taskGroupAsyncSleeping(_ count: Int, milliseconds: Int, width: Int) async {
        await withTaskGroup(of: Void.self) { group in
            var added = 0
            while added < min(width, count) {
                group.addTask { try? await Task.sleep(for: .milliseconds(milliseconds)) }
                added += 1
            }
            while await group.next() != nil, added < count {
                group.addTask { try? await Task.sleep(for: .milliseconds(milliseconds)) }
                added += 1
            }
        }
    }
}
