import Dispatch

// The timeout's events: setting it, arming it at the start, the end of the work, and a timer
// that fires. The storage side is in `Op+Timeout.swift` and `TimeoutTracker.swift`.

extension OpStateMachine {
    /// ``Op/timeout``.
    var timeout: Duration? { extras?.timing.limit?.duration }

    /// What the storage does to the timer: arm it, or disarm it, as generation `generation`.
    enum TimeoutArming {
        /// Arm a timer for `limit` from now on `clock` (`nil`: the continuous clock): of its
        /// duration (zero has passed already), or of the time left until its deadline, an instant
        /// of `clock` (read by the storage, with no lock held).
        case arm(TimeoutTracker, limit: TimeoutState.Limit, generation: UInt64,
                 clock: (any Clock<Duration>)?, qualityOfService: DispatchQoS.QoSClass)
        /// Cancel the armed timer.
        case disarm(TimeoutTracker, generation: UInt64)
    }

    /// Sets the timeout. The first limit makes a tracker, which the storage adds as an observer
    /// (it arms the timer when the operation starts). While the operation runs (its work not over),
    /// a new limit (re)arms the timer from now, and clearing disarms it.
    mutating func setTimeout(_ newValue: Duration?) -> (attach: TimeoutTracker?, arming: TimeoutArming?) {
        setTimeout(limit: newValue.map(TimeoutState.Limit.duration))
    }

    /// Sets the timeout as `limit`, a duration or a deadline (an instant of the operation's
    /// clock), or `nil` for none. See ``setTimeout(_:)``.
    mutating func setTimeout(limit: TimeoutState.Limit?) -> (attach: TimeoutTracker?, arming: TimeoutArming?) {
        let hasLimit = limit != nil
        guard hasLimit || extras != nil else { return (nil, nil) }
        let extras = ensureExtras()
        extras.timing.limit = limit
        var attach: TimeoutTracker?
        if hasLimit, extras.timing.tracker == nil {
            let tracker = TimeoutTracker()
            extras.timing.tracker = tracker
            attach = tracker
        }
        guard lifecycle == .executing, !extras.isTimingWorkOver, let tracker = extras.timing.tracker else {
            return (attach, nil)
        }
        extras.timing.generation &+= 1
        let generation = extras.timing.generation
        guard let limit else { return (attach, .disarm(tracker, generation: generation)) }
        return (attach, .arm(tracker, limit: limit, generation: generation,
                             clock: extras.timing.clock, qualityOfService: qualityOfService))
    }

    /// The operation starts executing: its timeout, if it has one, is armed from now, unless it
    /// was armed or disarmed since the start already (set while the operation runs, which
    /// counts from that moment). Asked when the tracker hears `willExecute`, and when it is
    /// attached (it may have been added just after the start).
    mutating func armTimeoutAtStart() -> TimeoutArming? {
        guard let extras, let limit = extras.timing.limit, let tracker = extras.timing.tracker,
              lifecycle == .executing, !extras.isTimingWorkOver, extras.timing.generation == 0 else { return nil }
        extras.timing.generation &+= 1
        return .arm(tracker, limit: limit, generation: extras.timing.generation, clock: extras.timing.clock,
                    qualityOfService: qualityOfService)
    }

    /// The operation's work is over (before its `willFinish` observers run): from now on no
    /// timer touches it.
    @inline(__always)
    mutating func endTimeout() {
        extras?.isTimingWorkOver = true
    }

    /// The timer armed as `generation` fired. If it is the one armed last and the operation's
    /// work is still going, the operation timed out: `error` becomes its error with the
    /// cancellation that the storage performs next (returns `true`). An operation whose work is
    /// over, that is cancelled or finished already, or whose timeout was changed or cleared since,
    /// is not touched.
    mutating func timeoutPassed(generation: UInt64, error: OpTimeoutError) -> Bool {
        guard let extras, extras.timing.generation == generation, !extras.isTimingWorkOver,
              lifecycle == .executing, !isCancelled else { return false }
        _ = recordCancellationError(error)
        return true
    }
}

// The total timeout and the clock: set before the operation enters a queue, the total timeout is
// armed as it enters one (or as it starts, if it is started by hand), and passes while it waits or
// while it runs.

extension OpStateMachine {
    /// ``Op/totalTimeout``.
    var totalTimeout: Duration? { extras?.timing.totalDuration }

    /// ``Op/clock``, or `nil` for the continuous clock (the default).
    var timingClock: (any Clock<Duration>)? { extras?.timing.clock }

    /// Whether ``Op/clock`` and ``Op/totalTimeout`` can still change: not once the operation has
    /// entered a queue (or a group) or started, since the total timeout counts from then on the
    /// clock.
    var acceptsTimingSettings: Bool {
        membership.isFree && lifecycle == .pending
    }

    /// Sets the clock (`nil` for the continuous clock); refused (returns `false`, and the old
    /// clock is kept) once the operation entered a queue or started. Returns the old clock, to
    /// be released outside the lock.
    mutating func setClock(_ newValue: (any Clock<Duration>)?) -> (accepted: Bool, old: (any Clock<Duration>)?) {
        guard acceptsTimingSettings else { return (false, nil) }
        guard newValue != nil || extras != nil else { return (true, nil) }
        let extras = ensureExtras()
        let old = extras.timing.clock
        extras.timing.clock = newValue
        return (true, old)
    }

    /// Sets the total timeout; refused (returns `false`) once the operation entered a queue or
    /// started. The first limit (of either timeout) makes a tracker, which the storage adds as an
    /// observer.
    mutating func setTotalTimeout(_ newValue: Duration?) -> (accepted: Bool, attach: TimeoutTracker?) {
        guard acceptsTimingSettings else { return (false, nil) }
        guard newValue != nil || extras != nil else { return (true, nil) }
        let extras = ensureExtras()
        extras.timing.totalDuration = newValue
        guard newValue != nil, extras.timing.tracker == nil else { return (true, nil) }
        let tracker = TimeoutTracker()
        extras.timing.tracker = tracker
        return (true, tracker)
    }

    /// What arming the total timeout asks the storage to do.
    struct TotalTimeoutArming {
        /// The tracker that keeps the timer.
        var tracker: TimeoutTracker
        /// The total timeout.
        var duration: Duration
        /// The clock to measure it on (`nil`: the continuous clock).
        var clock: (any Clock<Duration>)?
        /// The quality of service of the handler.
        var qualityOfService: DispatchQoS.QoSClass
    }

    /// The operation entered a queue, or started (by hand, or before the arming at its entry
    /// came): its total timeout, if it has one, is armed from now, once.
    mutating func armTotalTimeout() -> TotalTimeoutArming? {
        guard let extras, let duration = extras.timing.totalDuration, let tracker = extras.timing.tracker,
              !extras.timing.isTotalArmed, !extras.isTimingWorkOver else { return nil }
        switch lifecycle {
        case .pending:
            guard !membership.isFree else { return nil }   // armed as it enters a queue
        case .executing:
            break
        case .finishing, .finished:
            return nil
        }
        extras.timing.isTotalArmed = true
        return TotalTimeoutArming(tracker: tracker, duration: duration, clock: extras.timing.clock,
                                  qualityOfService: qualityOfService)
    }

    /// The total timeout passed. An operation that waits (it has not started) or whose work is
    /// still going timed out: the error that `makeError` makes for that phase becomes its error
    /// with the cancellation that the storage performs next (returns `true`). One whose work is
    /// over, or that is cancelled or finished already, is not touched.
    mutating func totalTimeoutPassed(_ makeError: (OpTimeoutError.Phase) -> OpTimeoutError) -> Bool {
        guard let extras, !extras.isTimingWorkOver, !isCancelled else { return false }
        let phase: OpTimeoutError.Phase
        switch lifecycle {
        case .pending: phase = .waiting
        case .executing: phase = .running
        case .finishing, .finished: return false
        }
        _ = recordCancellationError(makeError(phase))
        return true
    }
}
