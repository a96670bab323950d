import Dispatch

/// Keeps the timers of an operation's ``Op/timeout`` and ``Op/totalTimeout``: arms the first when
/// the operation starts executing (or when the timeout is set while it runs), the second when it
/// enters a queue (or starts, if started by hand), and cancels both when the operation's work is
/// over. An observer, so that an operation without a timeout pays nothing. The timers run on the
/// operation's ``Op/clock`` (see ``ClockTimer``).
///
/// Whether a timer that fires times the operation out is decided by the operation's state, under
/// its lock (see ``OpStateMachine/timeoutPassed(generation:error:)``); the tracker only holds
/// the timer armed last, so that it can be cancelled and its handler released.
final class TimeoutTracker: OpObserver, Sendable {
    private struct Armed {
        /// The generation of `timer`, or of the last disarming.
        var generation: UInt64 = 0
        var timer: ClockTimer?
        /// The timer of the total timeout, once armed.
        var totalTimer: ClockTimer?
        /// The operation's work is over: nothing is armed any more.
        var isOver = false
    }

    private let armed = LockedBox(Armed())

    func didAttach(to operation: Op) {
        // Attached as the operation started: `willExecute` may have been posted before this
        // observer was added, after the setter saw the operation pending. Nothing happens if the
        // timer was armed since the start (see `armTimeoutAtStart()`). The total timeout is
        // armed as the operation enters a queue, or here if it started first.
        willExecute(operation)
    }

    func willExecute(_ operation: Op) {
        if let arming = operation.withState({ $0.armTimeoutAtStart() }) {
            operation.perform(arming)
        }
        operation.armTotalTimeout()
    }

    func willFinish(_ operation: Op, error: (any Error)?) {
        stop()
    }

    func didFinish(_ operation: Op, error: (any Error)?) {
        stop()
    }

    /// Arms a timer of `duration` for `operation` as `generation`, replacing an older one. A
    /// duration of zero has passed already: the operation times out now, on the calling thread.
    func arm(_ operation: Op, after duration: Duration, generation: UInt64, clock: (any Clock<Duration>)?,
             qualityOfService: DispatchQoS.QoSClass) {
        guard duration > .zero else {
            replace(with: nil, generation: generation)
            operation.timeoutPassed(duration, generation: generation)
            return
        }
        let timer = ClockTimer(after: duration, clock: clock, qualityOfService: qualityOfService) {
            operation.timeoutPassed(duration, generation: generation)
        }
        replace(with: timer, generation: generation)
    }

    /// Arms the timer of the total timeout, `duration` from now on `clock`, for `operation`
    /// (armed once). A duration of zero has passed already: the operation times out now, on the
    /// calling thread.
    func armTotal(_ operation: Op, after duration: Duration, clock: (any Clock<Duration>)?,
                  qualityOfService: DispatchQoS.QoSClass) {
        guard duration > .zero else {
            operation.totalTimeoutPassed(duration)
            return
        }
        let timer = ClockTimer(after: duration, clock: clock, qualityOfService: qualityOfService) {
            operation.totalTimeoutPassed(duration)
        }
        let unneeded: ClockTimer? = armed.withLockedValue { armed in
            guard !armed.isOver else { return timer }
            armed.totalTimer = timer
            return nil
        }
        unneeded?.cancel()
    }

    /// Cancels the armed timer, as `generation`.
    func disarm(generation: UInt64) {
        replace(with: nil, generation: generation)
    }

    /// Keeps `timer` as the one armed as `generation`, unless a later arming or disarming came
    /// first (another thread may arm or disarm concurrently), and cancels the one not kept.
    private func replace(with timer: ClockTimer?, generation: UInt64) {
        let unneeded: ClockTimer? = armed.withLockedValue { armed in
            guard !armed.isOver, generation > armed.generation else { return timer }
            defer {
                armed.generation = generation
                armed.timer = timer
            }
            return armed.timer
        }
        unneeded?.cancel()
    }

    private func stop() {
        let timers: (ClockTimer?, ClockTimer?) = armed.withLockedValue { armed in
            armed.isOver = true
            defer {
                armed.timer = nil
                armed.totalTimer = nil
            }
            return (armed.timer, armed.totalTimer)
        }
        timers.0?.cancel()
        timers.1?.cancel()
    }
}
