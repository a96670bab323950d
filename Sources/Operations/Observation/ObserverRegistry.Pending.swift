import Dispatch

extension ObserverRegistry {
    /// An event in the outbox: waiting for delivery, or being delivered one recipient at a time.
    final class Pending: @unchecked Sendable {
        // @unchecked Sendable: `event`, `sequence` and `held` never change; every other field is
        // only touched with the registry's lock held.

        /// A handler to call.
        enum Recipient {
            /// A property observation (with its prior notification, if it asked for one).
            case entry(Entry)
            /// An ``OpObserver``.
            case observer(any OpObserver)
        }

        let event: Event
        /// The event's place in the order of its object's events.
        let sequence: UInt64
        /// The operation that cannot move on until this event was delivered (a `willExecute` or
        /// `willFinish` whose poster waits for it), unretained: its poster keeps it alive until
        /// then. Its handlers hold it up (see ``WaitDeadlocks``).
        let held: Unmanaged<Op>?
        /// Who hears of it: taken when its delivery begins (the observers registered before the
        /// event, and still registered).
        var recipients: [Recipient]?
        /// How many recipients were called (or are being called).
        var next = 0
        /// The threads running a handler of it that did not step aside.
        var running: [UnsafeMutableRawPointer] = []
        /// Whether every handler of it returned (or stepped aside).
        var isDone = false
        /// Signalled when it is done, or when its deliverer stepped aside: its poster waits.
        var waiter: DispatchSemaphore?
        /// For `didFinish`: the observers let go once it was delivered, released with the event
        /// outside the lock.
        var released: [Registered<any OpObserver>] = []

        init(event: Event, sequence: UInt64, held: Op?) {
            self.event = event
            self.sequence = sequence
            self.held = held.map { Unmanaged.passUnretained($0) }
        }

        /// Whether every recipient was called (or is being called).
        var isBegun: Bool {
            guard let recipients else { return false }
            return next == recipients.count
        }
    }
}
