import Dispatch

/// The life of one operation, as a pure state machine.
///
/// The machine takes no locks, calls no user code and resumes nobody: each event returns an
/// action that ``Op`` performs after releasing the operation's lock. Misuse is reported as an
/// action too, so that the storage can trap with a message naming the operation.
///
/// ```
///  pending ──start──▶ executing ──finish──▶ finishing ──complete──▶ finished
///     └────start when cancelled (finish at once)──▲
/// ```
///
/// One word per step, in the machine and in the storage that performs its actions:
///
/// - **start**: the operation begins: pending → executing, and its body runs
///   (``startManually()``, ``startFromQueue(ticket:)``). Starting a cancelled operation finishes
///   it at once instead.
/// - **finish**: its work is over: its body returned, an ``AsyncOp`` called `finish()`
///   (``requestFinish()``, which refuses unless the operation is executing), or a cancelled
///   operation was started. Executing → finishing (``finish()``); `isFinished` reads `true` from
///   here. The storage then notifies the dependents, gives the queue its slot back and runs the
///   completion block (``FinishAction``, performed by ``Op/performFinish(_:releasesSlot:inDrainer:)``).
/// - **leave**: the queue removes the finished operation from its members, once the completion
///   block has returned (``OpQueue/leave(_:)``, or the drainer that ran it).
/// - **complete**: everything is over: finishing → finished, and the waiters are released
///   (``complete()``, performed by ``Op/complete(leaving:)`` right after the operation left its
///   queue).
struct OpStateMachine {
    /// Where the operation is in its one-shot life.
    enum Lifecycle: UInt8, Sendable, CaseIterable {
        /// Not started yet (it may be waiting in a queue).
        case pending
        /// `main()` or the asynchronous body is running.
        case executing
        /// The work is over; the completion block (if any) has not returned yet.
        case finishing
        /// Everything is over; waiters have been released.
        case finished
    }

    /// A programmer error detected by a transition.
    enum Misuse: Equatable, Sendable {
        /// `start()` was called on an operation that sits in a queue.
        case startWhileEnqueued
        /// `start()` was called on an operation that is executing.
        case startWhileExecuting
        /// `start()` was called on an operation whose dependencies have not finished.
        case startWhileNotReady
        /// The operation was added to a queue while already in one.
        case enqueueWhileEnqueued
        /// A group's child was added to a queue (the group runs it in its own queue of children).
        case enqueueGroupChild
        /// The operation was added to a queue while executing.
        case enqueueWhileExecuting
        /// The operation was added to a queue after it finished.
        case enqueueWhenFinished
        /// `finish()` was called on an asynchronous operation that is not executing.
        case finishWhenNotExecuting
        /// `finish()` was called twice.
        case finishTwice
        /// `finish()` was called on an operation that finished without executing (it was cancelled
        /// before it started, so `execute()` never ran).
        case finishWithoutExecuting
    }

    /// Where the queue should put the operation once it is ready.
    struct Schedule: Equatable, Sendable {
        /// The ready list to use.
        var priority: Op.QueuePriority
        /// Matches the operation's current ticket; a ready-list entry with an older ticket is stale.
        var ticket: Op.Ticket
    }

    /// The steps between "every dependency finished" and "running" (see `OpStateMachine+Gates.swift`).
    enum Gate: UInt8, Sendable, CaseIterable {
        /// Nothing to pass before the ready list: the operation goes there as soon as it is ready
        /// (an exclusive one takes its categories when its queue starts it).
        case open
        /// Conditions wait to be evaluated, once the operation is ready.
        case closed
        /// The conditions are being evaluated.
        case evaluating
        /// Its queue started it (or `start()` was called) and it waits for its exclusivity
        /// categories, holding no slot of its queue.
        case waitingForExclusivity
    }

    // MARK: Storage
    //
    // A pending operation is a benchmark (a million of them wait in a suspended queue), so the
    // machine is kept to 29 bytes: the references first, then the small fields, which leave the
    // operation's own one-byte fields room in the tail. The yes-or-no facts share one byte
    // (``Bits``), the lifecycle and the gate another, and what only operations with dependencies
    // or dependents use is in ``Links``, allocated on first use like ``Extras``.
    //
    // The transitions live in `OpStateMachine+*.swift`, one file per concern (gates,
    // dependencies, lifecycle, cancellation, properties), so the stored properties and the facts
    // are internal: only those files change them; the storage (`Op`) reads them under the lock.

    /// Where the operation belongs: nowhere yet, a queue, or a group (see ``Membership``).
    var membership: Membership = .free
    var extras: Extras?
    /// The dependency lists, once the operation has a dependency or a dependent.
    var links: Links?
    var ticket: Op.Ticket = 0
    private var bits: Bits = []
    /// ``lifecycle`` in the low two bits, ``gate`` in the next two.
    private var phase: UInt8 = 0
    var priority: Op.QueuePriority = .normal

    /// The machine's yes-or-no facts, one bit each.
    struct Bits: OptionSet {
        let rawValue: UInt8
        static let cancelled = Bits(rawValue: 1 << 0)
        static let observed = Bits(rawValue: 1 << 1)
        static let exclusive = Bits(rawValue: 1 << 2)
        static let runsWhenCancelled = Bits(rawValue: 1 << 3)
        // 1 << 4 is free (a group child is told by ``membership``).
        static let scheduled = Bits(rawValue: 1 << 5)
        static let executed = Bits(rawValue: 1 << 6)
        static let hadDependencies = Bits(rawValue: 1 << 7)
    }

    /// The links, allocated if needed.
    @inline(__always)
    mutating func ensureLinks() -> Links {
        if let links { return links }
        let created = Links()
        links = created
        return created
    }

    private func has(_ bit: Bits) -> Bool { bits.contains(bit) }

    private mutating func set(_ bit: Bits, _ value: Bool) {
        if value { bits.insert(bit) } else { bits.remove(bit) }
    }

    // MARK: Facts

    var isCancelled: Bool {
        get { has(.cancelled) }
        set { set(.cancelled, newValue) }
    }
    /// Whether the operation has ``OpObserver``s (mirrored in ``Op/Flags/observed``).
    var hasObservers: Bool {
        get { has(.observed) }
        set { set(.observed, newValue) }
    }
    /// Whether the operation asks for exclusivity categories, which it gives back when it finishes.
    var isExclusive: Bool {
        get { has(.exclusive) }
        set { set(.exclusive, newValue) }
    }
    /// Whether the body runs even when the operation was cancelled before it started: a
    /// ``GroupOp`` runs to let its (cancelled) children finish.
    var runsWhenCancelled: Bool {
        get { has(.runsWhenCancelled) }
        set { set(.runsWhenCancelled, newValue) }
    }
    /// Whether a ready-list entry with the current ticket is in the queue.
    var isScheduled: Bool {
        get { has(.scheduled) }
        set { set(.scheduled, newValue) }
    }
    /// Whether the body ever started (false for an operation cancelled before it started).
    var hasExecuted: Bool {
        get { has(.executed) }
        set { set(.executed, newValue) }
    }
    /// Whether the operation ever had a dependency (mirrored in ``Op/Flags/hadDependencies``).
    /// One that never had any is on no loop of dependencies, so a finished operation can keep
    /// holding it strongly (see ``Op/settleDependencies()``).
    var hasHadDependencies: Bool {
        get { has(.hadDependencies) }
        set { set(.hadDependencies, newValue) }
    }
    // Both enums have four cases without payloads, so each is one byte holding its case's index,
    // which is its raw value: two bits read back without `init(rawValue:)`, which the compiler
    // left as a call in every transition (checked by `PendingOperationSizeTests`).
    @inline(__always)
    var lifecycle: Lifecycle {
        get { unsafeBitCast(phase & 0b11, to: Lifecycle.self) }
        set { phase = phase & ~0b11 | newValue.rawValue }
    }
    /// Whether conditions or exclusivity still stand between readiness and the ready list. Only
    /// an operation in a queue passes them there (a manual start passes them on the calling
    /// thread); a cancelled operation skips them.
    @inline(__always)
    var gate: Gate {
        get { unsafeBitCast(phase >> 2 & 0b11, to: Gate.self) }
        set { phase = phase & 0b11 | newValue.rawValue << 2 }
    }
    /// How many dependencies hold the operation back (each lists it as a dependent).
    var unfinishedDependencyCount: Int {
        get { links.map { Int($0.unfinishedDependencyCount) } ?? 0 }
        set { if links != nil || newValue != 0 { ensureLinks().unfinishedDependencyCount = Int32(newValue) } }
    }


    init() {}
}
