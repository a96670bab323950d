import Dispatch

/// A one-shot timer on Dispatch: runs its handler once, on a global queue, when the time has
/// passed, unless it is cancelled first. It holds no thread while it waits, and cancelling it
/// releases the handler (and what the handler captures) at once.
///
/// Used by ``DelayOp``, ``Op/timeout`` and the waits of ``RetryOp``.
final class DeadlineTimer: @unchecked Sendable {
    // @unchecked Sendable: `source` is immutable, and a Dispatch source is thread-safe (it may be
    // cancelled from any thread, also while its handler runs), though not marked `Sendable`.
    private let source: any DispatchSourceTimer

    /// Starts a timer that calls `handler` after `duration`.
    init(after duration: Duration, qualityOfService: DispatchQoS.QoSClass = .default,
         handler: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: .global(qos: qualityOfService))
        source.schedule(deadline: .now() + duration.dispatchInterval, leeway: .milliseconds(1))
        // The handler captures the source until it fires or is cancelled: either way the source
        // is cancelled, and Dispatch then releases the handler, which ends the loop.
        source.setEventHandler { [source] in
            source.cancel()
            handler()
        }
        source.activate()
    }

    /// Stops the timer: the handler does not run unless it has started already.
    func cancel() {
        source.cancel()
    }
}
