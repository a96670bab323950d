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

    /// Arms or disarms the timeout's timer as the state machine says.
    final func perform(_ arming: OpStateMachine.TimeoutArming) {
        switch arming {
        case .arm(let tracker, let duration, let generation, let qualityOfService):
            tracker.arm(self, after: duration, generation: generation, qualityOfService: qualityOfService)
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
        let error = OpTimeoutError(timeout: duration, operation: description)
        if withState({ $0.timeoutPassed(generation: generation, error: error) }) {
            cancel()
        }
    }
}
