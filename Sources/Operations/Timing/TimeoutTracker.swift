import Dispatch

/// Keeps the timer of an operation's ``Op/timeout``: arms it when the operation starts executing
/// (or when the timeout is set while it runs), and cancels it when the operation's work is over.
/// An observer, so that an operation without a timeout pays nothing.
///
/// Whether a timer that fires times the operation out is decided by the operation's state, under
/// its lock (see ``OpStateMachine/timeoutPassed(generation:error:)``); the tracker only holds
/// the timer armed last, so that it can be cancelled and its handler released.
final class TimeoutTracker: OpObserver, Sendable {
    private struct Armed {
        /// The generation of `timer`, or of the last disarming.
        var generation: UInt64 = 0
        var timer: DeadlineTimer?
        /// The operation's work is over: nothing is armed any more.
        var isOver = false
    }

    private let armed = LockedBox(Armed())

    func didAttach(to operation: Op) {
        // Attached as the operation started: `willExecute` may have been posted before this
        // observer was added, after the setter saw the operation pending. Nothing happens if the
        // timer was armed since the start (see `armTimeoutAtStart()`).
        willExecute(operation)
    }

    func willExecute(_ operation: Op) {
        if let arming = operation.withState({ $0.armTimeoutAtStart() }) {
            operation.perform(arming)
        }
    }

    func willFinish(_ operation: Op, error: (any Error)?) {
        stop()
    }

    func didFinish(_ operation: Op, error: (any Error)?) {
        stop()
    }

    /// Arms a timer of `duration` for `operation` as `generation`, replacing an older one. A
    /// duration of zero has passed already: the operation times out now, on the calling thread.
    func arm(_ operation: Op, after duration: Duration, generation: UInt64, qualityOfService: DispatchQoS.QoSClass) {
        guard duration > .zero else {
            replace(with: nil, generation: generation)
            operation.timeoutPassed(duration, generation: generation)
            return
        }
        let timer = DeadlineTimer(after: duration, qualityOfService: qualityOfService) {
            operation.timeoutPassed(duration, generation: generation)
        }
        replace(with: timer, generation: generation)
    }

    /// Cancels the armed timer, as `generation`.
    func disarm(generation: UInt64) {
        replace(with: nil, generation: generation)
    }

    /// Keeps `timer` as the one armed as `generation`, unless a later arming or disarming came
    /// first (another thread may arm or disarm concurrently), and cancels the one not kept.
    private func replace(with timer: DeadlineTimer?, generation: UInt64) {
        let unneeded: DeadlineTimer? = armed.withLockedValue { armed in
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
        let timer: DeadlineTimer? = armed.withLockedValue { armed in
            armed.isOver = true
            defer { armed.timer = nil }
            return armed.timer
        }
        timer?.cancel()
    }
}
