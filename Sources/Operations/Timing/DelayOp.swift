/// An operation that only waits: it finishes once a time has passed, holding no thread, and at
/// once when it is cancelled.
///
/// As a dependency it delays other operations; in a group it spaces work out:
///
/// ```swift
/// let pause = DelayOp(for: .seconds(2))
/// let retry = BlockOp { upload(file) }
/// retry.addDependency(pause)
/// queue.addOperations([pause, retry], waitUntilFinished: false)
/// ```
///
/// ``init(for:)-(Duration)`` counts from the moment the operation starts executing (like any operation, it
/// starts once its dependencies have finished and its queue has a slot for it), on its
/// ``Op/clock``: a test clock advanced by hand ends it with no real waiting;
/// ``init(until:)`` waits for an instant of the continuous clock, and finishes at once if that
/// has passed. While it waits it holds its queue slot, as an ``AsyncOp`` does, but no thread: ten
/// thousand delays cost ten thousand timers, not threads.
///
/// A cancelled delay finishes at once (its dependents then start, as after any cancelled
/// dependency), with no ``Op/error``.
///
/// The wait can come from another operation: ``init(for:)-(Producer)`` waits for as long as a
/// producer says (a backoff computed from a server's answer, say), and ``duration`` and
/// ``deadline`` can be set until the delay starts, from ``Op/inject(from:_:)`` too.
public final class DelayOp: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: `wait` and `timer` are locked boxes.

    private enum Wait {
        case duration(Duration)
        case instant(ContinuousClock.Instant)
    }

    private enum TimerState {
        case idle
        case waiting(ClockTimer)
        case over
    }

    /// The wait, and whether it is fixed: ``execute()`` read it, and it can no longer change.
    private let wait: LockedBox<(wait: Wait, isFixed: Bool)>
    private let timer = LockedBox(TimerState.idle)

    /// Creates an operation that finishes `duration` after it starts executing.
    public init(for duration: Duration) {
        wait = LockedBox((.duration(duration), false))
        super.init()
    }

    /// Creates an operation that finishes at `deadline` (at once if that has passed when it
    /// starts).
    public init(until deadline: ContinuousClock.Instant) {
        wait = LockedBox((.instant(deadline), false))
        super.init()
    }

    /// Creates an operation that waits, once `producer` has finished, for the duration it
    /// produced, counted from the delay's start. `producer` becomes a dependency; if it fails or
    /// is cancelled, the delay is cancelled with an ``InjectionError`` and does not wait.
    ///
    /// ```swift
    /// let ask = AsyncBlockOp { try await server.retryAfter() }     // a Duration
    /// let pause = DelayOp(for: ask)
    /// let again = BlockOp { upload(file) }
    /// again.addDependency(pause)
    /// queue.addOperations([ask, pause, again], waitUntilFinished: false)
    /// ```
    public convenience init<Producer: ProducesOutput>(for producer: Producer) where Producer.Output == Duration {
        self.init(for: .zero)
        inject(from: producer) { delay, duration in delay.duration = duration }
    }

    /// How long the delay waits after it starts, or `nil` for one that waits until an instant.
    ///
    /// Setting it (until the delay starts: from ``Op/inject(from:_:)``, say) makes the delay wait
    /// that long from its start. Setting it once the delay started, or to `nil`, is a programmer
    /// error and traps.
    public var duration: Duration? {
        get {
            if case .duration(let duration) = wait.withLockedValue({ $0.wait }) { return duration }
            return nil
        }
        set { setWait(newValue.map(Wait.duration), named: "duration", otherwise: "deadline") }
    }

    /// The instant the delay waits for, or `nil` for one that waits for a duration from its start.
    ///
    /// Setting it (until the delay starts) makes the delay wait for that instant of the continuous
    /// clock. Setting it once the delay started, or to `nil`, is a programmer error and traps.
    public var deadline: ContinuousClock.Instant? {
        get {
            if case .instant(let deadline) = wait.withLockedValue({ $0.wait }) { return deadline }
            return nil
        }
        set { setWait(newValue.map(Wait.instant), named: "deadline", otherwise: "duration") }
    }

    /// Replaces the wait, set through `property` (`other` is the property to set instead of
    /// clearing it), unless the delay started: a programmer error, which traps, as clearing is.
    private func setWait(_ newWait: Wait?, named property: String, otherwise other: String) {
        guard let newWait else {
            misuse("The \(property) of \(self) was set to nil. Set a value, or set \(other) instead.")
        }
        let isPending = !isExecuting && !isFinished && wait.withLockedValue { state in
            guard !state.isFixed else { return false }
            state.wait = newWait
            return true
        }
        if !isPending {
            misuse("The \(property) of \(self) was set after it started. Set it before the delay starts (from inject(from:_:) at the latest).")
        }
    }

    /// Starts the wait: a timer, with no thread held.
    public override func execute() {
        let wait = self.wait.withLockedValue { state in
            state.isFixed = true
            return state.wait
        }
        if case .duration(let duration) = wait, let clock = timingClock {
            // On another clock than the continuous one: a sleep on that clock, in a task.
            guard duration > .zero else {
                end()
                return
            }
            hold(ClockTimer(after: duration, clock: clock, qualityOfService: qualityOfService) { [self] in
                end()
            })
            if isCancelled {
                end()
            }
            return
        }
        let deadline: ContinuousClock.Instant = switch wait {
        case .duration(let duration): .now + duration
        case .instant(let instant): instant
        }
        schedule(until: deadline)
        if isCancelled {
            // Cancelled before the timer was set: `didCancelWhileExecuting()` left it to us.
            end()
        }
    }

    private func schedule(until deadline: ContinuousClock.Instant) {
        let remaining = deadline - .now
        guard remaining > .zero else {
            end()
            return
        }
        let next = ClockTimer.dispatch(DeadlineTimer(after: remaining, qualityOfService: qualityOfService) { [self] in
            // Dispatch's clock and the continuous clock may differ slightly: wait for the rest.
            if ContinuousClock.now < deadline {
                schedule(until: deadline)
            } else {
                end()
            }
        })
        hold(next)
    }

    /// Keeps `next` as the timer of the wait, unless the delay is over (then it is cancelled).
    private func hold(_ next: ClockTimer) {
        let unneeded: ClockTimer? = timer.withLockedValue { state in
            if case .over = state { return next }
            state = .waiting(next)
            return nil
        }
        unneeded?.cancel()
    }

    /// Finishes the delay, once, whether the time passed or it was cancelled.
    private func end() {
        let ends: (Bool, ClockTimer?) = timer.withLockedValue { state in
            switch state {
            case .over:
                return (false, nil)
            case .idle:
                state = .over
                return (true, nil)
            case .waiting(let pending):
                state = .over
                return (true, pending)
            }
        }
        ends.1?.cancel()
        if ends.0 {
            finish()
        }
    }

    /// Starting it only sets a timer.
    override var startsBriefly: Bool { true }

    /// A running delay ends at once when it is cancelled. If its timer is not set yet,
    /// ``execute()`` has not run (or is running): it sees the cancellation once it has set the
    /// timer and ends the delay then, so the delay never finishes before its work started
    /// (observers hear `willExecute` before `willFinish`).
    override func didCancelWhileExecuting() {
        let isWaiting = timer.withLockedValue { state in
            if case .waiting = state { return true }
            return false
        }
        if isWaiting {
            end()
        }
    }

    /// "DelayOp for 2.0 seconds" or "DelayOp until …", with the name if there is one.
    public override var description: String {
        if name != nil { return super.description }
        switch wait.withLockedValue({ $0.wait }) {
        case .duration(let duration): return "DelayOp for \(duration)"
        case .instant(let instant): return "DelayOp until \(instant)"
        }
    }
}
