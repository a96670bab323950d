extension OpStateMachine {
    /// The box that holds an operation's ``TimeoutState`` (see ``Extras/timing``): allocated when
    /// a timeout, a total timeout or a clock is first set, so that the extras of other operations
    /// stay small.
    final class TimingBox {
        // Only touched with the operation's lock held, like the extras that hold it.
        var state = TimeoutState()
    }
}
