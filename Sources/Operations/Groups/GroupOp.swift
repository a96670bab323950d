import Synchronization

/// An operation made of child operations: it finishes when every child has finished.
///
/// ```swift
/// let signIn = BlockOp { session.signIn() }
/// let feed = BlockOp { session.fetchFeed() }
/// feed.addDependency(signIn)
/// let refresh = GroupOp(operations: [signIn, feed])
/// refresh.completionBlock = { print(refresh.progress) }
/// queue.addOperation(refresh)
/// ```
///
/// **Running.** When the group starts, its children are added to a queue of its own: an
/// ``OpQueue`` has no threads, so the children run on the shared worker pool (or on the group's
/// queue's ``OpQueue/underlyingQueue``, if it has one), with the group's quality of service, as
/// ready as their dependencies allow, up to the group's ``maxConcurrentOperationCount``. Children
/// may depend on operations outside the group and the other way round. The group holds its slot of
/// its queue while its children run (it is an ``AsyncOp``), and it finishes once the last child
/// has finished and its completion block has returned.
///
/// **Adding children.** ``addChild(_:)`` and ``addChildren(_:)`` work before the group starts and
/// while it runs, from any thread (a child too, see ``Op/produce(_:)``).
///
/// **Cancelling.** Cancelling the group cancels every child, and children added later start
/// cancelled; the group still finishes only when they have. A child reaches its group with
/// ``Op/group`` (`Op.current?.group` from its body) and can cancel it.
///
/// **Errors.** If children failed (finished with a non-`nil` ``Op/error``), the group's
/// ``Op/error`` is a ``GroupError`` listing their errors in the order they failed. With
/// ``cancelsChildrenOnFailure``, the first failure cancels the other children.
///
/// **Nesting.** A child may be a group; ``Op/progress`` rolls up the children, nested groups
/// included.
///
/// - Important: A child belongs to one group, and is added to no queue of its own. Adding an
///   operation that is in a queue, started, or a child of another group, or adding children once
///   the group finished, is a programmer error and traps.
open class GroupOp: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: `state` is a locked box, `unfinished` an atomic; `childQueue` and
    // `link` are thread-safe.

    /// The queue that runs the children once the group started.
    private let childQueue = OpQueue(childrenOf: ())
    private let state = LockedBox(State())
    /// The children that have not finished, plus one until the group has started: the group
    /// finishes when it drops to zero. Changed without the lock as children finish; raised only
    /// with the lock held, while the group is not finished (see ``finishIfDone()``).
    private let unfinished = Atomic<Int>(1)
    /// What the children hold to find their group: one weak reference per group, not one per
    /// child (an object with weak references is slower to release, and each weak reference costs).
    final let link = Link()

    /// Leads a child to its group without keeping the group alive.
    final class Link: @unchecked Sendable {
        // @unchecked Sendable: `group` is written once, in the group's initializer, before the
        // group (and so the link) can reach another thread; afterwards it is only read (the
        // runtime makes reading a weak reference safe against the object's release).
        weak var group: GroupOp?
    }

    private struct State {
        /// Every child, in the order it was added, held until the group finishes.
        var children: [Op] = []
        /// The children once the group finished, held weakly (see ``GroupOp/children``).
        var finishedChildren: [WeakOp] = []
        /// Children added before the group started, added to the child queue when it starts.
        var waitingForStart: [Op] = []
        var started = false
        var finished = false
        var cancelsChildrenOnFailure = false
        /// The errors of the children that failed, in the order they failed.
        var errors: [any Error] = []
    }

    /// Creates a group of `operations` (more can be added with ``addChild(_:)``).
    public init(operations: [Op] = []) {
        super.init()
        link.group = self
        withState { $0.runEvenWhenCancelled() }
        addChildren(operations)
    }

    // MARK: Children

    /// The children, in the order they were added.
    ///
    /// Once the group has finished, it holds its children weakly: those that nothing else keeps
    /// are released (a child may depend on its group, directly or through other operations, and
    /// the group would otherwise keep that loop alive), and this lists the others.
    public final var children: [Op] {
        state.withLockedValue { state in
            state.finished ? state.finishedChildren.compactMap(\.operation) : state.children
        }
    }

    /// Adds a child. Before the group starts, it waits for the start; while the group runs, it is
    /// scheduled at once. If the group is cancelled, the child is cancelled too.
    ///
    /// - Important: Adding a child once the group finished traps, as does adding an operation that
    ///   is in a queue, started, a child of another group, or the group itself (or one of its
    ///   ancestors).
    public final func addChild(_ operation: Op) {
        addChildren([operation])
    }

    /// Adds children; see ``addChild(_:)``.
    public final func addChildren(_ operations: [Op]) {
        guard !operations.isEmpty else { return }
        let ancestors = self.ancestors
        for operation in operations {
            if operation === self || ancestors.contains(where: { $0 === operation }) {
                misuse("\(operation) was added as a child of \(self), which it contains (or is): a group cannot be nested in itself.")
            }
            let (isFree, current) = operation.withState { machine -> (Bool, GroupOp?) in
                guard machine.queue == nil, machine.lifecycle == .pending else { return (false, nil) }
                return (true, machine.join(self))
            }
            if !isFree {
                misuse("\(operation) was added as a child of \(self), but it is in a queue already or has started. A child is added to its group only: create a new operation, or add this one to the group instead of a queue.")
            }
            if let current, current !== self {
                misuse("\(operation) was added as a child of \(self), but it is a child of \(current) already. An operation belongs to one group.")
            }
        }
        let outcome: (start: [Op], cancelled: Bool)? = state.withLockedValue { state in
            guard !state.finished else { return nil }
            state.children += operations
            unfinished.add(operations.count, ordering: .relaxed)
            // Read with the lock held: `cancel()` marks the group cancelled before it takes the
            // children under this lock, so a child added here is either in its list or sees it.
            let cancelled = isCancelled
            if state.started {
                return (operations, cancelled)
            }
            state.waitingForStart += operations
            return ([], cancelled)
        }
        guard let outcome else {
            misuse("A child was added to \(self) after it finished. Add children before the group finishes (from a child of the group while it runs, for example), or put the work in a new group.")
        }
        DependencyCycles.groupChildrenJoined(operations, group: self)
        if outcome.cancelled {
            for operation in operations { operation.cancel() }
        }
        run(outcome.start)
    }

    /// Runs `children` in the child queue, which tells the group when each is finished for good
    /// (``OpQueue/owningGroup``). A child that was started by hand meanwhile is waited for instead.
    private final func run(_ children: [Op], startingHere: Bool = false) {
        guard !children.isEmpty else { return }
        var queued: [Op] = []
        queued.reserveCapacity(children.count)
        for child in children {
            // Read without the lock: a child was pending and in no queue when it was added, and
            // only a start by hand (a misuse) can have moved it on since.
            if child.flags.load(ordering: .acquiring) & (Flags.executing | Flags.finished) == 0 {
                queued.append(child)
            } else {
                child.onCompletion { [self] in childFinished(child) }
            }
        }
        // When the group starts on a worker of the pool, that worker starts running the children
        // (as the drainer that the pool would otherwise get as a job of its own). Started by hand
        // on another thread, or on a Dispatch queue, it only adds them.
        let drainsHere = startingHere && ThreadContext.current.pointee.worker != nil
            && childQueue.withLock { childQueue.storedUnderlyingQueue == nil }
        childQueue.enqueue(queued, drainingHere: drainsHere)
    }

    /// A child finished with `error`, before its dependents are told: the error is listed and,
    /// with ``cancelsChildrenOnFailure``, the other children are cancelled at the first failure.
    final func childFailed(_ child: Op, error: any Error) {
        let cancelOthers: [Op] = state.withLockedValue { state in
            state.errors.append(error)
            return state.errors.count == 1 && state.cancelsChildrenOnFailure ? state.children : []
        }
        for other in cancelOthers where other !== child {
            other.cancel()
        }
    }

    /// A child is finished for good (it left the child queue): the group finishes after the last.
    final func childFinished(_ child: Op) {
        DependencyCycles.groupChildLeft(child, group: self)
        childDidFinish(child)
        if unfinished.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            finishIfDone()
        }
    }

    /// Called when a child is finished for good, before the group counts it as finished: a child
    /// added here keeps the group running. No lock is held.
    func childDidFinish(_ child: Op) {}

    /// The group's error once every child finished: a ``GroupError`` listing the children's
    /// errors, or `nil` if none failed.
    func failure(fromChildErrors errors: [any Error]) -> (any Error)? {
        errors.isEmpty ? nil : GroupError(errors: errors)
    }

    /// The count of unfinished children reached zero: the group finishes, unless a child was
    /// added meanwhile (additions raise the count with the lock held, so under the lock zero
    /// means done).
    private final func finishIfDone() {
        let finished: (errors: [any Error], children: [Op])? = state.withLockedValue { state in
            guard !state.finished, unfinished.load(ordering: .acquiring) == 0 else { return nil }
            state.finished = true
            state.finishedChildren = state.children.map(WeakOp.init)
            let children = state.children
            state.children = []
            return (state.errors, children)
        }
        if let finished {
            // The strong references go after unlocking: releasing a child may run its deinit.
            withExtendedLifetime(finished.children) {
                // The progress keeps the final counts: it may outlive the group.
                withState { $0.existingProgress }?.groupDidFinish(childCount: finished.children.count)
                finishGroup(errors: finished.errors)
            }
        }
    }

    private final func finishGroup(errors: [any Error]) {
        childQueue.withLock { childQueue.owningGroup = nil }   // ends the loop group → queue → group
        if let failure = failure(fromChildErrors: errors) {
            finish(throwing: failure)
        } else {
            finish()
        }
    }

    // MARK: Settings

    /// The most children that run at once; ``OpQueue/defaultMaxConcurrentOperationCount`` (the
    /// default) sets no limit beyond the worker pool's.
    public final var maxConcurrentOperationCount: Int {
        get { childQueue.maxConcurrentOperationCount }
        set { childQueue.maxConcurrentOperationCount = newValue }
    }

    /// Whether the first child that fails cancels the other children (`false` by default).
    public final var cancelsChildrenOnFailure: Bool {
        get { state.withLockedValue { $0.cancelsChildrenOnFailure } }
        set { state.withLockedValue { $0.cancelsChildrenOnFailure = newValue } }
    }

    /// The children counted for ``Op/progress``: how many there are, how many finished, and the
    /// share of the work done (each child one unit, a running one by its own fraction).
    struct ChildProgress {
        let total: Int
        let finished: Int
        let fraction: Double
    }

    /// The group's progress, rolled up from its children (see ``OpProgress``).
    final var childProgress: ChildProgress {
        let (children, finishedGroup, finishedCount) = state.withLockedValue { state in
            (state.children, state.finished, state.finishedChildren.count)
        }
        if finishedGroup {
            return ChildProgress(total: finishedCount, finished: finishedCount, fraction: 1)
        }
        var finished = 0
        var units = 0.0
        for child in children {
            if child.isFinished {
                finished += 1
                units += 1
            } else if let group = child as? GroupOp {
                units += group.childProgress.fraction
            } else if let progress = child.withState({ $0.existingProgress }) {
                units += progress.fractionCompleted
            }
        }
        // Complete only once the group has finished: more children may come (a retry's next
        // attempt, say) while all those added so far have finished.
        let fraction = children.isEmpty ? 0 : min(units / Double(children.count), Double(1).nextDown)
        return ChildProgress(total: children.count, finished: finished, fraction: fraction)
    }

    /// Has the group's queue count the group's progress while it runs.
    final func reportProgressToQueue() {
        reportProgress(progress)
    }

    /// The exclusivity categories of the children, and of theirs (a group asks for them with its
    /// own: see ``OpCondition/mutuallyExclusive(_:)``).
    final var descendantExclusivityCategories: [String] {
        children.flatMap { child in
            child.withState { $0.exclusivityCategories } + ((child as? GroupOp)?.descendantExclusivityCategories ?? [])
        }
    }

    /// The synchronous children holding worker threads (for the pool's exhaustion report).
    final func childOperationsHoldingWorkers() -> [Op] {
        childQueue.operationsHoldingWorkers()
    }

    /// The children that have not finished (for the cycle searches, which see through groups).
    final var unfinishedChildren: [Op] {
        state.withLockedValue { $0.children }.filter { !$0.isFinished }
    }

    // MARK: Running

    /// Starts the children: they run in the group's own queue, with the group's quality of
    /// service and its queue's underlying Dispatch queue. The group finishes when the last child
    /// has. Add work as children; a subclass that overrides this (to note the start, say) must
    /// call `super.execute()`.
    /// A group starts its children on the thread that starts it (see ``execute()``): not brief.
    override var startsBriefly: Bool { false }

    open override func execute() {
        let (qualityOfService, queue, hasProgress) = withState {
            ($0.qualityOfService, $0.queue, $0.existingProgress != nil)
        }
        let underlying = queue?.underlyingQueue
        childQueue.withLock {
            // The queue is empty: its children are added below.
            childQueue.storedQualityOfService = qualityOfService
            childQueue.storedUnderlyingQueue = underlying
            childQueue.owningGroup = self
        }
        // Cancelled in any way (cancel(), a failed condition, an ended cycle): the children are
        // cancelled before any of them starts, and those added later start cancelled.
        let isCancelled = self.isCancelled
        let (waiting, children): ([Op], [Op]) = state.withLockedValue { state in
            state.started = true
            let waiting = state.waitingForStart
            state.waitingForStart = []
            return (waiting, isCancelled ? state.children : [])
        }
        for child in children {
            child.cancel()
        }
        // A queue that reports progress counts the group by its fraction while it runs.
        if let queue, !queue.isGroupQueue, hasProgress || queue.progress.isReportingQueue {
            reportProgressToQueue()
        }
        run(waiting, startingHere: true)
        // The start counted as one unfinished child until now.
        if unfinished.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            finishIfDone()
        }
    }

    /// Cancels the group and every child; children added later start cancelled.
    open override func cancel() {
        super.cancel()
        // After the group reads as cancelled: a child added from now on sees it (see
        // `addChildren(_:)`), and those added before are in this list.
        let children = state.withLockedValue { $0.children }
        for child in children {
            child.cancel()
        }
    }
}
