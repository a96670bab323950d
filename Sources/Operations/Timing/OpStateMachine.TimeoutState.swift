extension OpStateMachine {
    /// An operation's ``Op/timeout``, ``Op/totalTimeout`` and ``Op/clock``, and the arming of
    /// their timers, kept with the operation's state so that the decision "timed out or finished
    /// in time" is taken under the operation's lock.
    struct TimeoutState {
        /// The limit, a duration or a deadline; `nil` for none.
        var limit: Limit?
        /// The observer that arms the timers (when the operation starts, or enters a queue), once
        /// a limit was set.
        var tracker: TimeoutTracker?
        /// Counts the armings and disarmings of the timer: a timer that fires acts only if it is
        /// the one armed last (see ``OpStateMachine/timeoutPassed(generation:error:)``).
        var generation: UInt64 = 0
        /// ``Op/totalTimeout``; `nil` for none.
        var totalDuration: Duration?
        /// Whether the total timeout's timer was armed (it is armed once: as the operation enters
        /// a queue, or as it starts if it is started by hand).
        var isTotalArmed = false
        /// ``Op/clock``; `nil` for the continuous clock (the timers then run on Dispatch time).
        var clock: (any Clock<Duration>)?
    }
}
