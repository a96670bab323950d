import Dispatch

// The timeout's events: setting it, arming it at the start, the end of the work, and a timer
// that fires. The storage side is in `Op+Timeout.swift` and `TimeoutTracker.swift`.

extension OpStateMachine {
    /// ``Op/timeout``.
    var timeout: Duration? { extras?.timing.duration }

    /// What the storage does to the timer: arm it, or disarm it, as generation `generation`.
    enum TimeoutArming {
        /// Arm a timer of `duration` from now (a duration of zero has passed already).
        case arm(TimeoutTracker, duration: Duration, generation: UInt64, qualityOfService: DispatchQoS.QoSClass)
        /// Cancel the armed timer.
        case disarm(TimeoutTracker, generation: UInt64)
    }

    /// Sets the timeout. The first limit makes a tracker, which the storage adds as an observer
    /// (it arms the timer when the operation starts). While the operation runs (its work not over),
    /// a new limit (re)arms the timer from now, and clearing disarms it.
    mutating func setTimeout(_ newValue: Duration?) -> (attach: TimeoutTracker?, arming: TimeoutArming?) {
        guard newValue != nil || extras != nil else { return (nil, nil) }
        let extras = ensureExtras()
        extras.timing.duration = newValue
        var attach: TimeoutTracker?
        if newValue != nil, extras.timing.tracker == nil {
            let tracker = TimeoutTracker()
            extras.timing.tracker = tracker
            attach = tracker
        }
        guard lifecycle == .executing, !extras.timing.isWorkOver, let tracker = extras.timing.tracker else {
            return (attach, nil)
        }
        extras.timing.generation &+= 1
        let generation = extras.timing.generation
        guard let newValue else { return (attach, .disarm(tracker, generation: generation)) }
        return (attach, .arm(tracker, duration: newValue, generation: generation, qualityOfService: qualityOfService))
    }

    /// The operation starts executing: its timeout, if it has one, is armed from now, unless it
    /// was armed or disarmed since the start already (set while the operation runs, which
    /// counts from that moment). Asked when the tracker hears `willExecute`, and when it is
    /// attached (it may have been added just after the start).
    mutating func armTimeoutAtStart() -> TimeoutArming? {
        guard let extras, let duration = extras.timing.duration, let tracker = extras.timing.tracker,
              lifecycle == .executing, !extras.timing.isWorkOver, extras.timing.generation == 0 else { return nil }
        extras.timing.generation &+= 1
        return .arm(tracker, duration: duration, generation: extras.timing.generation, qualityOfService: qualityOfService)
    }

    /// The operation's work is over (before its `willFinish` observers run): from now on no
    /// timer touches it.
    @inline(__always)
    mutating func endTimeout() {
        extras?.timing.isWorkOver = true
    }

    /// The timer armed as `generation` fired. If it is the one armed last and the operation's
    /// work is still going, the operation timed out: `error` becomes its error with the
    /// cancellation that the storage performs next (returns `true`). An operation whose work is
    /// over, that is cancelled or finished already, or whose timeout was changed or cleared since,
    /// is not touched.
    mutating func timeoutPassed(generation: UInt64, error: OpTimeoutError) -> Bool {
        guard let extras, extras.timing.generation == generation, !extras.timing.isWorkOver,
              lifecycle == .executing, !isCancelled else { return false }
        _ = recordCancellationError(error)
        return true
    }
}
