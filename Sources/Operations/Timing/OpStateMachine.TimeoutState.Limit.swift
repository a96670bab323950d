extension OpStateMachine.TimeoutState {
    /// An operation's ``Op/timeout``, in one of its two forms: one timer per operation, so
    /// setting either replaces the other.
    enum Limit {
        /// How long the work may take, from its start (``Op/timeout``).
        case duration(Duration)
        /// An instant of the operation's ``Op/clock`` that the work must end by
        /// (``Op/setTimeout(at:)``).
        case deadline(any InstantProtocol<Duration>)

        /// The duration, if the limit is one (``Op/timeout`` reads `nil` for a deadline).
        var duration: Duration? {
            if case .duration(let duration) = self { return duration }
            return nil
        }
    }
}
