extension OpStateMachine {
    /// An operation's ``Op/timeout`` and the arming of its timer, kept with the operation's state
    /// so that the decision "timed out or finished in time" is taken under the operation's lock.
    struct TimeoutState {
        /// The limit; `nil` for none.
        var duration: Duration?
        /// The observer that arms the timer when the operation starts, once a limit was set.
        var tracker: TimeoutTracker?
        /// Counts the armings and disarmings of the timer: a timer that fires acts only if it is
        /// the one armed last (see ``OpStateMachine/timeoutPassed(generation:error:)``).
        var generation: UInt64 = 0
        /// Whether the operation's work is over (its body returned, or `finish()` was called):
        /// no timer applies to it any more.
        var isWorkOver = false
    }
}
