import Dispatch

/// A one-shot timer on Dispatch: runs its handler once, on the worker pool, when the time has
/// passed, unless it is cancelled first. It holds no thread while it waits, and cancelling it
/// releases the handler (and what the handler captures) at once.
///
/// The handler is a job of the pool's library lane (``WorkerPool/submitLibraryWork(qualityOfService:_:)``):
/// it does not wait behind a backlog of users' work of any class, and gets a thread at once
/// while every worker is busy, so that a timer fires on time under load. It runs at the
/// quality of service of the operation it serves. A handler must be short: it cancels or ends an
/// operation (whose observers it then tells), or schedules work elsewhere.
///
/// Used by ``DelayOp``, ``Op/timeout``, the waits of ``RetryOp``, and the library's own checks
/// (stalled queues, the grace period of a dependency cycle, waits that search for deadlocks).
/// Nothing in the library waits on Dispatch's global queues: on Linux they do not grow while
/// their threads block, so code blocking them would hold every timer back.
final class DeadlineTimer: @unchecked Sendable {
    // @unchecked Sendable: `source` is immutable, and a Dispatch source is thread-safe (it may be
    // cancelled from any thread, also while its handler runs), though not marked `Sendable`.
    private let source: any DispatchSourceTimer

    /// Starts a timer that calls `handler` after `duration`.
    init(after duration: Duration, qualityOfService: DispatchQoS.QoSClass = .default,
         handler: @escaping @Sendable () -> Void) {
        // Timers fire on a queue of the library's own, which gets a thread even while code
        // elsewhere blocks every thread of Dispatch's global queues, and the handler runs on the
        // worker pool, which adds threads when work blocks (a handler may finish an operation
        // and so run observers).
        source = DispatchSource.makeTimerSource(queue: DeadlineTimer.queue)
        source.schedule(deadline: .now() + duration.dispatchInterval, leeway: .milliseconds(1))
        // The handler captures the source until it fires or is cancelled: either way the source
        // is cancelled, and Dispatch then releases the handler, which ends the loop.
        source.setEventHandler { [source] in
            source.cancel()
            WorkerPool.shared.submitLibraryWork(qualityOfService: qualityOfService, handler)
        }
        source.activate()
    }

    /// Runs `handler` once after `duration`, on the worker pool; the timer keeps itself alive
    /// until then.
    static func run(after duration: Duration, _ handler: @escaping @Sendable () -> Void) {
        _ = DeadlineTimer(after: duration, handler: handler)
    }

    /// The queue every timer fires on (a serial queue: firing only hands the handler on).
    private static let queue = DispatchQueue(label: "operations.deadline-timers")

    /// Stops the timer: the handler does not run unless it has started already.
    func cancel() {
        source.cancel()
    }
}
