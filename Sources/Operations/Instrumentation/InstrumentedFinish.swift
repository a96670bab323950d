/// What an ``OpInstrument`` learns about an operation that finished: gathered once, outside the
/// library's locks, and shared by every installed instrument.
struct InstrumentedFinish: Sendable {
    /// Nanoseconds of Dispatch's uptime clock.
    let time: UInt64
    /// The thread it finished on.
    let thread: TraceThread
    /// The operation's serial number.
    let serial: UInt64
    let name: String?
    /// Its class (named only when needed: formatting a type's name is slow).
    let type: Op.Type
    /// The queue it finished in (nil for a group's child, or an operation started by hand;
    /// named only when needed: an unnamed queue's name is formatted on each read).
    private(set) var queue: OpQueue?
    /// The group it is a child of.
    let group: (serial: UInt64, name: String)?
    /// The serial numbers of its dependencies.
    let dependencies: [UInt64]
    let error: (any Error)?
    let isCancelled: Bool
    /// Whether its body ran (false: cancelled before it started).
    let hasExecuted: Bool
    let isAsynchronous: Bool

    /// The same finish, without the reference to the queue (for keeping).
    func withoutQueue() -> InstrumentedFinish {
        var finish = self
        finish.queue = nil
        return finish
    }
}
