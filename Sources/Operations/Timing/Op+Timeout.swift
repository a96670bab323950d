// Timeouts: an operation cancelled with an `OpTimeoutError` when it runs for too long.

extension Op {
    /// How long the operation may run: measured from the moment it starts executing, and when it
    /// passes while the operation's work is still going, the operation is cancelled with an
    /// ``OpTimeoutError`` as its ``error``. `nil` (the default) sets no limit.
    ///
    /// Cancelling is all a timeout does, as with any cancellation: a synchronous ``main()``
    /// should check ``isCancelled`` as it goes, and the task of an ``AsyncOp``'s `async` body is
    /// cancelled at once, so `Task.isCancelled`, `try Task.checkCancellation()` and cancellable
    /// waits such as `Task.sleep` see it. No thread waits for the timeout, and its timer fires on
    /// time however busy the worker pool is.
    ///
    /// ```swift
    /// let fetch = AsyncOp { try await client.download(url) }
    /// fetch.timeout = .seconds(10)
    /// queue.addOperation(fetch)
    /// ```
    ///
    /// The rules:
    /// - Set before the operation starts, the timeout counts from its start.
    /// - Set while the operation runs, it (re)arms the timer from that moment, whatever was set
    ///   before; clearing it (`nil`) disarms the timer.
    /// - An operation whose work is over (its body returned, or it called ``AsyncOp/finish()``)
    ///   before the timeout passed is never touched by its timer, even while its observers'
    ///   ``OpObserver/willFinish(_:error:)`` still run. One cancelled or finished in another way
    ///   keeps that outcome.
    /// - Zero means that the time is up as the operation starts: it is cancelled before its body
    ///   runs (the body still runs, cancelled, as after any cancellation while it starts). Set
    ///   while the operation runs, zero cancels it at once.
    ///
    /// The time is measured on the operation's ``clock`` (the continuous clock by default). To
    /// count the time the operation waits to start as well, use ``totalTimeout``.
    ///
    /// An operation without a timeout pays nothing for the feature.
    ///
    /// - Important: A negative timeout is a programmer error and traps: give zero or more, or
    ///   `nil` for no limit.
    public final var timeout: Duration? {
        get { withState { $0.timeout } }
        set {
            if let newValue, newValue < .zero {
                misuse("The timeout of \(self) was set to \(newValue), which is negative. Give a duration of zero or more (zero cancels the operation as it starts), or nil for no limit.")
            }
            let (attach, arming) = withState { $0.setTimeout(newValue) }
            if let attach {
                addObserver(attach)
            }
            if let arming {
                perform(arming)
            }
        }
    }

    /// The deadline form of ``timeout``: the operation may run until `deadline`, an instant of its
    /// ``clock``; when that passes while its work is still going, it is cancelled with an
    /// ``OpTimeoutError``, as for ``timeout`` (whose rules apply: set before the start, the timer
    /// is armed as the operation starts; set while it runs, from now). A deadline that has passed
    /// when the timer is armed cancels the operation as it starts. It replaces ``timeout`` (which
    /// reads `nil` from then on), and setting ``timeout`` replaces it: one timer per operation.
    ///
    /// ```swift
    /// let deadline = ContinuousClock.now + .seconds(30)   // the request's budget
    /// for step in steps { step.setTimeout(at: deadline) }
    /// ```
    ///
    /// - Important: `deadline` must be an instant of the operation's ``clock`` (of the continuous
    ///   clock unless you set another): one of another clock traps, naming both.
    public final func setTimeout<Instant: InstantProtocol>(at deadline: Instant) where Instant.Duration == Duration {
        _ = timeLeft(until: deadline, on: clock)   // checked now, where the mistake is made
        let (attach, arming) = withState { $0.setTimeout(limit: .deadline(deadline)) }
        if let attach {
            addObserver(attach)
        }
        if let arming {
            perform(arming)
        }
    }

    /// The time from now until `deadline` on `clock` (zero if it has passed); traps if `deadline`
    /// is not an instant of `clock`.
    private final func timeLeft(until deadline: any InstantProtocol<Duration>, on clock: any Clock<Duration>) -> Duration {
        func left<C: Clock<Duration>>(_ clock: C) -> Duration {
            guard let instant = deadline as? C.Instant else {
                misuse("setTimeout(at:) on \(self) was given \(deadline), an instant of another clock than the operation's clock, \(clock). Give an instant of the operation's clock (\(C.Instant.self)), or set its clock first.")
            }
            return max(.zero, clock.now.duration(to: instant))
        }
        return left(clock)
    }

    /// Arms or disarms the timeout's timer as the state machine says.
    final func perform(_ arming: OpStateMachine.TimeoutArming) {
        switch arming {
        case .arm(let tracker, let limit, let generation, let clock, let qualityOfService):
            let length = switch limit {
            case .duration(let duration): duration
            case .deadline(let deadline): timeLeft(until: deadline, on: clock ?? ContinuousClock())
            }
            tracker.arm(self, after: length, generation: generation, clock: clock, qualityOfService: qualityOfService)
        case .disarm(let tracker, let generation):
            tracker.disarm(generation: generation)
        }
    }

    /// The timer armed as `generation`, for `duration`, fired: the operation is cancelled with an
    /// ``OpTimeoutError`` if its work is still going and the timeout was not changed since. The
    /// decision is taken under the operation's lock, with the operation's own state (see
    /// ``OpStateMachine/timeoutPassed(generation:error:)``); the cancellation follows, through
    /// ``cancel()`` (so that a subclass's override hears of it).
    final func timeoutPassed(_ duration: Duration, generation: UInt64) {
        // Described here, with no lock held: `description` may be overridden.
        let error = OpTimeoutError(timeout: duration, operation: description, phase: .running)
        if withState({ $0.timeoutPassed(generation: generation, error: error) }) {
            cancel()
        }
    }

    /// How long the operation may take from the moment it enters a queue to the end of its work,
    /// waiting included: measured on ``clock``, and when it passes first, the operation is
    /// cancelled with an ``OpTimeoutError`` as its ``error``. `nil` (the default) sets no limit.
    ///
    /// It counts everything an operation waits for before it starts: its dependencies, its
    /// conditions, its exclusivity categories, its queue's width, a suspended queue. A deadline for
    /// a request, whatever stands in its way:
    ///
    /// ```swift
    /// let render = BlockOp { renderThumbnail(of: image) }
    /// render.totalTimeout = .seconds(2)   // waiting and running together
    /// render.completionBlock = {
    ///     if let timedOut = render.error as? OpTimeoutError {
    ///         print(timedOut.phase == .waiting ? "never started" : "gave up while running")
    ///     }
    /// }
    /// queue.addOperation(render)
    /// ```
    ///
    /// The rules:
    /// - It counts from the moment the operation enters a queue (``OpQueue/addOperation(_:)-(Op)``
    ///   and the other ways to add one; for a child of a ``GroupOp``, its group's queue of
    ///   children). An operation started by hand with ``start()``, in no queue, counts from its
    ///   start, as ``timeout`` does.
    /// - Passing before the operation starts, it cancels the operation with an error whose
    ///   ``OpTimeoutError/phase`` is ``OpTimeoutError/Phase/waiting``: the operation stops
    ///   waiting for its unfinished dependencies (as any cancelled operation does: see
    ///   ``cancel()``), its queue finishes it without running its body, and its completion block,
    ///   its observers and its dependents go on as after any cancellation. In a suspended queue it
    ///   is cancelled at once and leaves when the queue resumes (a suspended queue starts nothing,
    ///   not even to finish a cancelled operation). A ``GroupOp`` starts all the same, as after any
    ///   cancellation, only to let its children, cancelled with it, finish.
    /// - Passing while the operation runs, it cancels it as ``timeout`` does, with
    ///   ``OpTimeoutError/Phase/running``.
    /// - An operation whose work is over, or that was cancelled or finished in another way,
    ///   keeps that outcome. With ``timeout`` set too, whichever passes first cancels it.
    /// - Zero cancels the operation as it enters its queue.
    ///
    /// An operation without a total timeout pays nothing for the feature.
    ///
    /// - Important: Set it before adding the operation to a queue (or to a group) and before
    ///   starting it: setting it later traps, since the time counts from then. A negative total
    ///   timeout is a programmer error and traps too.
    public final var totalTimeout: Duration? {
        get { withState { $0.totalTimeout } }
        set {
            if let newValue, newValue < .zero {
                misuse("The totalTimeout of \(self) was set to \(newValue), which is negative. Give a duration of zero or more (zero cancels the operation as it enters its queue), or nil for no limit.")
            }
            let (accepted, attach) = withState { $0.setTotalTimeout(newValue) }
            guard accepted else {
                misuse("The totalTimeout of \(self) was set after it entered a queue or started; it counts from the moment the operation enters its queue. Set totalTimeout before adding the operation to a queue, or set timeout to limit the time it runs from now.")
            }
            if let attach {
                addObserver(attach)
            }
        }
    }

    /// Arms the total timeout if it has one and it is not armed yet: called as the operation
    /// enters a queue, and as it starts (for one started by hand).
    final func armTotalTimeout() {
        if let arming = withState({ $0.armTotalTimeout() }) {
            arming.tracker.armTotal(self, after: arming.duration, clock: arming.clock,
                                    qualityOfService: arming.qualityOfService)
        }
    }

    /// The total timeout of `duration` passed: the operation is cancelled with an
    /// ``OpTimeoutError`` if it is still waiting or its work is still going, with the phase it is
    /// in, decided under its lock (see ``OpStateMachine/totalTimeoutPassed(_:)``).
    final func totalTimeoutPassed(_ duration: Duration) {
        // Described here, with no lock held: `description` may be overridden.
        let operation = description
        if withState({ $0.totalTimeoutPassed { OpTimeoutError(timeout: duration, operation: operation, phase: $0) } }) {
            cancel()
        }
    }
}
