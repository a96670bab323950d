import Synchronization

/// How far an operation, a group or a queue has come, the counterpart of Foundation's
/// `Progress` as `Operation` and `OperationQueue` use it.
///
/// **An operation's progress** (``Op/progress``): a long ``Op/main()`` or an ``AsyncOp`` sets
/// ``totalUnitCount`` once it knows how much there is to do and raises ``completedUnitCount`` as
/// it goes. An operation that sets nothing counts as one unit, complete when it finishes. Either
/// way, a finished operation's ``fractionCompleted`` is 1.
///
/// ```swift
/// let upload = AsyncOp {
///     let progress = Op.current!.progress
///     progress.totalUnitCount = Int64(chunks.count)
///     for chunk in chunks {
///         try await send(chunk)
///         progress.completedUnitCount += 1
///     }
/// }
/// ```
///
/// **A group's progress** (``Op/progress`` of a ``GroupOp``) rolls up its children:
/// ``totalUnitCount`` is the number of children, ``completedUnitCount`` the number that finished,
/// and ``fractionCompleted`` counts each child as one unit, a running child by its own fraction
/// (nested groups included); it reaches 1 only once the group has finished (more children may
/// still come). It is derived from the children, so it cannot be set.
///
/// **A queue's progress** (``OpQueue/progress``) does not report until you set
/// ``totalUnitCount``. From then on, every operation that leaves the queue (it finished and its
/// completion block returned; barrier blocks count too) adds one to ``completedUnitCount``, and
/// ``fractionCompleted`` also counts the running operations that report their own units (and
/// running groups) by their fractions. Avoid backward progress: when you add more operations,
/// raise ``totalUnitCount`` accordingly.
///
/// Every property can be read at any time, from any thread. Reading an operation's progress is a
/// lock round trip; reading a group's (or a queue's with running groups) visits the running
/// children. An operation whose progress nobody asks for pays nothing for it.
public final class OpProgress: @unchecked Sendable, CustomStringConvertible {
    // @unchecked Sendable: `units` is only touched with `lock` held; `group` is written once,
    // in the initializer, before the object is shared (reading a weak reference is safe against
    // the object's release); the other stored properties are immutable or atomic.

    /// What the progress is about.
    enum Kind {
        case operation
        case group
        case queue
    }

    private struct Units {
        var total: Int64 = 0
        var completed: Int64 = 0
        /// The operation finished (``Kind/operation``).
        var isOwnerFinished = false
        /// The running members of a queue that report progress, by their identity.
        var running: [ObjectIdentifier: OpProgress] = [:]
    }

    let kind: Kind
    private let lock = Lock()
    private var units = Units()
    /// A queue's progress counts leaving operations once ``totalUnitCount`` was set. Read without
    /// the lock by every operation that leaves the queue.
    private let isReporting = Atomic<Bool>(false)
    /// The number of entries of `units.running`, read without the lock when an operation leaves.
    private let runningCount = Atomic<Int>(0)
    /// The group whose children the progress rolls up (``Kind/group``).
    private weak var group: GroupOp?

    /// The progress of a plain operation.
    init() {
        kind = .operation
    }

    /// The progress of a queue.
    init(queue: Void) {
        kind = .queue
    }

    /// The progress of `group`, rolled up from its children.
    init(group: GroupOp) {
        kind = .group
        self.group = group
    }

    // MARK: Units

    /// The amount of work: units chosen by the operation, the number of children of a group, or
    /// the number of operations a queue is about (setting it starts a queue's reporting).
    ///
    /// - Important: A group's count is derived from its children; setting it traps.
    public var totalUnitCount: Int64 {
        get {
            if kind == .group { return Int64(groupUnits.total) }
            return lock.withLock { units.total }
        }
        set {
            if kind == .group { refuseGroupUnits("totalUnitCount") }
            lock.withLock { units.total = newValue }
            if kind == .queue { isReporting.store(true, ordering: .relaxed) }
        }
    }

    /// The amount of work done: set by the operation as it goes; for a group, the children that
    /// finished; for a queue, the operations that left it since reporting started.
    ///
    /// - Important: A group's count is derived from its children; setting it traps.
    public var completedUnitCount: Int64 {
        get {
            if kind == .group { return Int64(groupUnits.finished) }
            return lock.withLock { units.completed }
        }
        set {
            if kind == .group { refuseGroupUnits("completedUnitCount") }
            lock.withLock { units.completed = newValue }
        }
    }

    /// The share of the work done, from 0 to 1.
    ///
    /// For an operation: 1 once it finished, otherwise ``completedUnitCount`` /
    /// ``totalUnitCount`` (0 while the total is 0). For a group: each child counts equally, a
    /// finished one as 1 and a running one by its own fraction. For a queue: the operations that
    /// left plus the fractions of the running ones that report progress, over
    /// ``totalUnitCount``.
    public var fractionCompleted: Double {
        switch kind {
        case .group:
            return groupUnits.fraction
        case .operation:
            let (total, completed, isOwnerFinished) = lock.withLock { (units.total, units.completed, units.isOwnerFinished) }
            if isOwnerFinished { return 1 }
            return OpProgress.fraction(Double(completed), of: total)
        case .queue:
            let (total, completed, running) = lock.withLock {
                (units.total, units.completed, units.running.isEmpty ? [] : Array(units.running.values))
            }
            // Read after unlocking: each member's progress has a lock of its own.
            let partial = running.reduce(0) { $0 + $1.fractionCompleted }
            return OpProgress.fraction(Double(completed) + partial, of: total)
        }
    }

    /// Whether all of the work is done (``fractionCompleted`` reached 1).
    public var isFinished: Bool {
        fractionCompleted >= 1
    }

    /// "completed of total".
    public var description: String {
        "\(completedUnitCount) of \(totalUnitCount)"
    }

    private static func fraction(_ completed: Double, of total: Int64) -> Double {
        total > 0 ? min(max(completed / Double(total), 0), 1) : 0
    }

    private var groupUnits: GroupOp.ChildProgress {
        let final: GroupOp.ChildProgress? = lock.withLock {
            guard units.isOwnerFinished else { return nil }
            return GroupOp.ChildProgress(total: Int(units.total), finished: Int(units.completed), fraction: 1)
        }
        return final ?? group?.childProgress ?? GroupOp.ChildProgress(total: 0, finished: 0, fraction: 0)
    }

    private func refuseGroupUnits(_ property: String) -> Never {
        misuse("\(property) was set on the progress of \(group.map(String.init(describing:)) ?? "a group"), which is derived from its children. Set the units of the children's progress instead.")
    }

    // MARK: Bookkeeping

    /// The operation finished: its fraction is 1 from now on.
    func ownerDidFinish() {
        lock.withLock { units.isOwnerFinished = true }
    }

    /// The group finished with `childCount` children: the progress keeps these final counts, so
    /// that it reads them after the group is released.
    func groupDidFinish(childCount: Int) {
        lock.withLock {
            units.total = Int64(childCount)
            units.completed = Int64(childCount)
            units.isOwnerFinished = true
        }
    }

    /// `member` of the queue started running and reports `progress`: its fraction counts until
    /// it leaves. Called with the queue's lock held.
    func memberStarted(_ member: Op, reporting progress: OpProgress) {
        lock.withLock {
            if units.running.updateValue(progress, forKey: ObjectIdentifier(member)) == nil {
                runningCount.add(1, ordering: .relaxed)
            }
        }
    }

    /// `member` left the queue: it counts as one completed unit (once the queue reports). Called
    /// with the queue's lock held.
    @inline(__always)
    func memberLeft(_ member: Op) {
        // Relaxed: the queue's lock orders these loads after the writes they need to see (the
        // total was set, or the member started, before the member could leave).
        if isReporting.load(ordering: .relaxed) || runningCount.load(ordering: .relaxed) != 0 {
            countLeaving(member)
        }
    }

    private func countLeaving(_ member: Op) {
        let released: OpProgress? = lock.withLock {
            if isReporting.load(ordering: .relaxed) { units.completed += 1 }
            guard let progress = units.running.removeValue(forKey: ObjectIdentifier(member)) else { return nil }
            runningCount.subtract(1, ordering: .relaxed)
            return progress
        }
        withExtendedLifetime(released) {}   // released outside the lock
    }

    /// Whether a queue's progress reports (its total was set).
    var isReportingQueue: Bool {
        isReporting.load(ordering: .relaxed)
    }
}
