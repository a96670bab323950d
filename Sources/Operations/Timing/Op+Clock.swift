// The clock that an operation's waits are measured on.

extension Op {
    /// The clock that measures the operation's ``timeout`` and ``totalTimeout``, the wait of a
    /// ``DelayOp`` made with ``DelayOp/init(for:)-(Duration)``, and the waits between the attempts of a
    /// ``RetryOp`` (and ``TypedRetryOp``). The continuous clock by default.
    ///
    /// A clock that a test advances by hand drives all of them with no real waiting:
    ///
    /// ```swift
    /// let clock = TestClock()             // a test clock, e.g. swift-clocks' TestClock
    /// let fetch = AsyncOp { try await client.download(url) }
    /// fetch.clock = clock
    /// fetch.timeout = .seconds(10)
    /// queue.addOperation(fetch)
    /// await clock.advance(by: .seconds(10))   // fetch is cancelled with an OpTimeoutError
    /// ```
    ///
    /// On the continuous clock (the default, or a `ContinuousClock` set here), the waits run on
    /// the library's own timers, which start no task. On any other clock each wait is a task on
    /// ``OpTaskExecutor`` (the library's threads) that awaits `clock.sleep(until:tolerance:)`,
    /// holding no thread; it is cancelled, and releases what it holds, as soon as the wait is no
    /// longer needed (the operation finished or was cancelled, the timeout changed).
    ///
    /// A ``RetryOp`` passes its clock on to the ``DelayOp`` of each wait between attempts. A
    /// ``DelayOp`` made with ``DelayOp/init(until:)`` waits for an instant of the continuous
    /// clock, whatever this clock is.
    ///
    /// An operation that uses the default clock pays nothing for the feature.
    ///
    /// - Important: Set it before adding the operation to a queue (or to a group) and before
    ///   starting it: setting it later traps, since the timeouts may be measured on it from then.
    public final var clock: any Clock<Duration> {
        get { withState { $0.timingClock } ?? ContinuousClock() }
        set {
            // The continuous clock is the default: kept as `nil`, so that its waits take the
            // fast path (Dispatch timers).
            let clock: (any Clock<Duration>)? = newValue is ContinuousClock ? nil : newValue
            let (accepted, old) = withState { $0.setClock(clock) }
            guard accepted else {
                misuse("The clock of \(self) was set after it entered a queue or started; its timeouts may be measured on the old clock from then. Set clock before adding the operation to a queue or starting it.")
            }
            withExtendedLifetime(old) {}   // released outside the lock
        }
    }

    /// The clock of the operation's waits, or `nil` for the continuous clock (on Dispatch time).
    final var timingClock: (any Clock<Duration>)? {
        withState { $0.timingClock }
    }
}
