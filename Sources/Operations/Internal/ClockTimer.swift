import Dispatch

/// A one-shot timer on an operation's ``Op/clock``: runs its handler once, on the worker pool,
/// when the time has passed on that clock, unless it is cancelled first.
///
/// On the default clock (`nil`: the continuous clock) it is a ``DeadlineTimer`` on Dispatch time,
/// the library's fast path, which starts no task. On any other clock (a test clock advanced by
/// hand, say) it is a task that runs on ``OpTaskExecutor`` (the library's threads, never a
/// blocked one) and awaits `clock.sleep(until:tolerance:)`; cancelling the timer cancels that
/// task, which ends the sleep and releases the handler (and what it captures).
///
/// Either way the handler runs as a job of the pool's library lane, as a ``DeadlineTimer``'s does
/// (``WorkerPool/submitLibraryWork(qualityOfService:_:)``).
enum ClockTimer: Sendable {
    /// A timer on Dispatch time (the continuous clock).
    case dispatch(DeadlineTimer)
    /// A task that sleeps on another clock.
    case sleep(Task<Void, Never>)

    /// Starts a timer that calls `handler` once `duration` has passed on `clock` (the continuous
    /// clock, on Dispatch time, for `nil`). The deadline is read from the clock now, so a task
    /// that starts late still wakes at the same instant.
    init(after duration: Duration, clock: (any Clock<Duration>)?,
         qualityOfService: DispatchQoS.QoSClass = .default,
         handler: @escaping @Sendable () -> Void) {
        guard let clock else {
            self = .dispatch(DeadlineTimer(after: duration, qualityOfService: qualityOfService, handler: handler))
            return
        }
        let sleep = Self.sleeper(on: clock, after: duration)
        let task = Task(executorPreference: OpTaskExecutor.shared, priority: TaskPriority(qualityOfService)) {
            do {
                try await sleep()
            } catch {
                return   // cancelled: the timer is no longer needed
            }
            guard !Task.isCancelled else { return }
            WorkerPool.shared.submitLibraryWork(qualityOfService: qualityOfService, handler)
        }
        self = .sleep(task)
    }

    /// Reads the deadline from `clock` now, and returns the wait for it.
    private static func sleeper<C: Clock<Duration>>(on clock: C, after duration: Duration)
        -> @Sendable () async throws -> Void {
        let deadline = clock.now.advanced(by: duration)
        return { try await clock.sleep(until: deadline, tolerance: nil) }
    }

    /// Stops the timer: the handler does not run unless it has started already.
    func cancel() {
        switch self {
        case .dispatch(let timer): timer.cancel()
        case .sleep(let task): task.cancel()
        }
    }
}
