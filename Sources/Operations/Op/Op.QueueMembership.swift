extension Op {
    /// The fields of an operation that belong to the queue it is in: where it sits in the member
    /// list, which barriers come before it, and which of its ready-list entries is the live one.
    ///
    /// Guarded by the lock of the operation's queue, not by the operation's own stripe: they are
    /// read and written only by ``OpQueueStateMachine`` and ``MemberList`` with that lock held.
    /// `isBarrier` is the one exception: ``OpQueue/addBarrierBlock(_:)`` sets it before adding
    /// the operation, and the queue's lock publishes it from there on.
    ///
    /// Sixteen bytes, widest field first (a pending operation is kept small).
    struct QueueMembership {
        /// How many barriers of its queue were added before the operation.
        var epoch = 0
        private var storedSlot: Int32 = -1
        /// The ticket of the live ready-list entry; entries with other tickets are stale.
        var readyTicket: Op.Ticket = 0
        /// `isBarrier`, `hasLiveReadyEntry`, `isParked`, `isLaneHead` and `isTaken`, one bit each (the flags
        /// share a byte, which keeps the membership at sixteen bytes), as the operation's state
        /// machine keeps its own (``OpStateMachine/Bits``).
        private var bits: Bits = []

        private struct Bits: OptionSet {
            let rawValue: UInt8
            static let barrier = Bits(rawValue: 1 << 0)
            static let liveReadyEntry = Bits(rawValue: 1 << 1)
            static let parked = Bits(rawValue: 1 << 2)
            static let laneHead = Bits(rawValue: 1 << 3)
            static let taken = Bits(rawValue: 1 << 4)
            static let takenAgain = Bits(rawValue: 1 << 5)
        }

        private mutating func set(_ bit: Bits, _ value: Bool) {
            if value { bits.insert(bit) } else { bits.remove(bit) }
        }

        /// Whether the queue treats the operation as a barrier.
        var isBarrier: Bool {
            get { bits.contains(.barrier) }
            set { set(.barrier, newValue) }
        }

        /// Whether the queue holds a live (not stale) ready-list entry for the operation.
        var hasLiveReadyEntry: Bool {
            get { bits.contains(.liveReadyEntry) }
            set { set(.liveReadyEntry, newValue) }
        }

        /// Whether its live entry waits in a lane of its queue (see ``OpQueueStateMachine/Lane``)
        /// rather than in the ready lists.
        var isParked: Bool {
            get { bits.contains(.parked) }
            set { set(.parked, newValue) }
        }

        /// Whether it is the head of a lane of its queue: the one operation of its category that
        /// the queue lets ask the exclusivity table (see ``OpQueueStateMachine/Lane``).
        var isLaneHead: Bool {
            get { bits.contains(.laneHead) }
            set { set(.laneHead, newValue) }
        }

        /// Whether its queue took it to start: it is no longer pending (see
        /// ``OpQueue/pendingOperationCount``). Cleared if the start is given back (it waits for
        /// its exclusivity categories, or its start came to nothing).
        var isTaken: Bool {
            get { bits.contains(.taken) }
            set { set(.taken, newValue) }
        }

        /// Whether its queue took it to start again before the previous start was given back
        /// (its turn came while the drainer that gave the start back had not told the queue yet):
        /// that give-back is then moot.
        var isTakenAgain: Bool {
            get { bits.contains(.takenAgain) }
            set { set(.takenAgain, newValue) }
        }

        /// The operation's position in its queue's ``MemberList``; -1 outside a queue. Below twice
        /// the number of members (plus ``NarrowedCounters/memberListSlack``), at any age of the
        /// queue: the list renumbers its members as it compacts.
        var slot: Int {
            get { Int(storedSlot) }
            set { storedSlot = Int32(newValue) }
        }
    }

    /// Tells a ready-list entry of an operation from its newer ones: it changes each time the
    /// operation is scheduled anew (a new priority while it waits), and wraps.
    ///
    /// Sixteen bits (``NarrowedCounters/ticketBits``: three in the checked build), because a
    /// pending operation is kept small. Wrapping is harmless by construction:
    /// - Entries are ordered with ``isNewer(_:than:)`` (serial-number arithmetic), which holds
    ///   while fewer than half the range of pushes of one operation are on their way to its queue
    ///   at once (each is made by a thread that changed the priority; 32,768 such threads, or
    ///   four in the checked build).
    /// - A live entry is told from a stale one by equality, so no stale entry may live long
    ///   enough to carry the live ticket again: each time an operation's live ticket enters the
    ///   other half of the range, its queue drops every older entry of it (see
    ///   ``OpQueueStateMachine/push(_:priority:callerWillPoll:)``). The tickets of an operation's
    ///   entries then span less than half the range, and are all different.
    typealias Ticket = UInt16

    /// The tickets in use: the low ``NarrowedCounters/ticketBits`` bits.
    @inline(__always)
    static var ticketMask: Ticket {
        Ticket(truncatingIfNeeded: (1 << NarrowedCounters.ticketBits) - 1)
    }

    /// The top bit of the tickets in use: it flips each time a ticket enters the other half of
    /// the range.
    @inline(__always)
    static var ticketHalfBit: Ticket {
        Ticket(truncatingIfNeeded: 1 << (NarrowedCounters.ticketBits - 1))
    }

    /// The ticket handed out after `ticket`, wrapping.
    @inline(__always)
    static func nextTicket(after ticket: Ticket) -> Ticket {
        (ticket &+ 1) & ticketMask
    }

    /// Whether `ticket` was handed out after `other` (less than half the range after it).
    @inline(__always)
    static func isNewer(_ ticket: Ticket, than other: Ticket) -> Bool {
        let distance = (ticket &- other) & ticketMask
        return distance != 0 && distance < ticketHalfBit
    }
}
