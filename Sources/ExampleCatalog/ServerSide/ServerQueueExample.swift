import Operations
#if ServiceLifecycle
import ServiceLifecycle
import Logging
#endif

/// A server's job queue: a bound on the waiting work, backpressure on the producer, load shed
/// when full, and a graceful shutdown that gives the jobs inside a grace period and cancels the
/// rest.
///
/// With the package's `ServiceLifecycle` trait (`swift run --traits ServiceLifecycle examples
/// server-queue`), the queue runs as an `OpQueueService` in a `ServiceGroup` that shuts down on
/// SIGTERM; the example triggers that graceful shutdown itself, as SIGTERM would. Without the
/// trait, it awaits `shutdown(gracePeriod:)` directly, which is what the service does.
enum ServerQueueExample {
    /// A job that runs until it finishes its work or is cancelled.
    final class ResizeJob: Op, @unchecked Sendable {
        // @unchecked Sendable: `steps` is immutable; the state is the operation's own.
        let steps: Int

        init(_ name: String, steps: Int) {
            self.steps = steps
            super.init()
            self.name = name
        }

        override func main() {
            for _ in 0..<steps {
                if isCancelled { return }
                spin(microseconds: 200)
            }
        }
    }

    /// Keeps a thread busy for about `microseconds` (simulated CPU work).
    static func spin(microseconds: Int) {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: .microseconds(microseconds))
        while clock.now < end {}
    }

    static let example = Example(
        name: "server-queue",
        title: "Backpressure, load shedding and a graceful shutdown",
        source: "Server-side fit: maxPendingOperationCount, enqueue, tryAddOperation, shutdown",
        expected: [
            "while suspended: 4 pending of at most 4",
            "request 5 refused: the queue is full (answer 503)",
            "24 jobs enqueued through backpressure; pending stayed within the bound of 4: true",
            "a job added after the shutdown began: cancelled, OpQueue \"jobs\" is closed: it takes no new operations",
            "shutdown: 28 jobs finished, the long one cancelled after the grace period",
        ]
    ) { output in
        let jobs = OpQueue()
        jobs.name = "jobs"
        jobs.maxConcurrentOperationCount = 2
        jobs.maxPendingOperationCount = 4

        // Load shedding: a request handler that must answer at once tries, and refuses when full.
        var all: [ResizeJob] = []
        jobs.isSuspended = true
        for index in 1...4 {
            let job = ResizeJob("thumb-\(index)", steps: 1)
            if jobs.tryAddOperation(job) { all.append(job) }
        }
        output.line("while suspended: \(jobs.pendingOperationCount) pending of at most \(jobs.maxPendingOperationCount)")
        if !jobs.tryAddOperation(ResizeJob("thumb-5", steps: 1)) {
            output.line("request 5 refused: the queue is full (answer 503)")
        }
        jobs.isSuspended = false

        // Backpressure: a producer that can wait awaits room; no thread is held while it waits.
        let peak = Locked(0)
        for index in 1...24 {
            let job = ResizeJob("photo-\(index)", steps: 5)
            try await jobs.enqueue(job)
            all.append(job)
            let pending = jobs.pendingOperationCount
            peak.withLock { $0 = max($0, pending) }
        }
        let bound = jobs.maxPendingOperationCount
        output.line("24 jobs enqueued through backpressure; pending stayed within the bound of \(bound): \(peak.withLock { $0 } <= bound)")

        // One long job that only a cancellation ends.
        let long = ResizeJob("reindex", steps: .max)
        try await jobs.enqueue(long)
        let late = ResizeJob("late", steps: 1)

        #if ServiceLifecycle
        // The queue as a service: its group shuts down gracefully on SIGTERM.
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: OpQueueService(queue: jobs, gracePeriod: .seconds(1)))],
            gracefulShutdownSignals: [.sigterm],
            logger: Logger(label: "server-queue")))
        let running = Task { try await group.run() }
        await group.triggerGracefulShutdown()   // what SIGTERM does
        while !jobs.isClosed { await Task.yield() }
        jobs.addOperation(late)
        try await running.value
        #else
        // What the service does: close, wait up to the grace period, cancel the rest.
        let shutdown = Task { await jobs.shutdown(gracePeriod: .seconds(1)) }
        while !jobs.isClosed { await Task.yield() }
        jobs.addOperation(late)
        _ = await shutdown.value
        #endif

        let lateError = late.error.map { "\($0)" } ?? "no error"
        output.line("a job added after the shutdown began: \(late.isCancelled ? "cancelled" : "not cancelled"), \(lateError)")
        let finished = all.filter { $0.isFinished && !$0.isCancelled }.count
        output.line("shutdown: \(finished) jobs finished, the long one \(long.isCancelled ? "cancelled after the grace period" : "not cancelled")")
    }
}
