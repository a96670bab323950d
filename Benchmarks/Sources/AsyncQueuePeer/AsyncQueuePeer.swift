import AsyncQueue

/// Workloads for swift-async-queue (github.com/dfed/swift-async-queue), built only when
/// `SWIFT_ASYNC_QUEUE_PATH` names a checkout of it (see `Package.swift` and `README.md`).
public enum AsyncQueuePeer {
    /// `count` empty jobs through a `FIFOQueue`, enqueued as its own tests and README do, with
    /// `Task(on: queue) { }`, and awaited to completion: a `FIFOQueue` ends its jobs in the order
    /// they were enqueued, so the last one's value comes once all have run.
    ///
    /// Each job is two tasks (the one `Task(on:)` returns and the one that runs the body) and two
    /// actors (a semaphore and a delivery), passed to one long-lived task through an `AsyncStream`.
    public static func fifoQueueAsyncSerial(_ count: Int) async {
        let queue = FIFOQueue()
        var last: Task<Void, Never>?
        for _ in 0..<count {
            last = Task(on: queue) {}
        }
        await last?.value
    }
}
