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
/// queue's ``OpQueue/underlyingQueue``), with the group's quality of service, as ready as their
/// dependencies allow, up to the group's ``maxConcurrentOperationCount``. Starting the group only
/// hands its children to that queue: ``execute()`` returns at once, and no child runs on the
/// thread that started the group before it has returned. Children may depend on operations
/// outside the group and the other way round. The group holds its slot of its queue while its
/// children run (it is an ``AsyncOp``), and it finishes once the last child has finished and its
/// completion block has returned.
///
/// **Adding children.** ``addChild(_:)`` and ``addChildren(_:)`` work before the group starts and
/// while it runs, from any thread (a child too, see ``Op/produce(_:)``). Inside a child,
/// ``OpQueue/current`` is the group's queue of children: an operation added to it becomes a child
/// of the group, as ``addChild(_:)`` would make it.
///
/// **Memory.** The group holds a child until it has finished (and its completion block has
/// returned), then lets it go: a group that runs for a long time, its children adding more as it
/// goes, holds only the children that have not finished. ``children`` lists those;
/// ``childCount`` and ``finishedChildCount`` count every child of the group's life. The errors the
/// group reports are bounded too (see ``GroupError``).
///
/// **Cancelling.** Cancelling the group cancels every child that has not finished, and children
/// added later start cancelled; the group still finishes only when they have. A child reaches its
/// group with ``Op/group`` (`Op.current?.group` from its body) and can cancel it.
///
/// **Suspending.** A group whose ``isSuspended`` is `true` starts no new children; those running
/// go on, and the group finishes only once it is resumed and its children have finished.
///
/// **Errors.** If children failed (finished with a non-`nil` ``Op/error``), the group's
/// ``Op/error`` is a ``GroupError`` listing their errors in the order they failed (the first
/// ``GroupError/errorLimit``, and a count of the others). With ``cancelsChildrenOnFailure``, the
/// first failure cancels the other children.
///
/// **Nesting.** A child may be a group; ``Op/progress`` rolls up the children, nested groups
/// included.
///
/// - Important: A child belongs to one group, once, and is added to no queue: "child of a group"
///   and "in a queue" exclude each other. Adding an operation that is in a queue, started, or a
///   child of a group (this one included), adding a group's child to a queue, or adding children
///   once the group finished, is a programmer error and traps in the call that does it.
open class GroupOp: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: `state` is a locked box; `link` is thread-safe.

    private let state = LockedBox(State())
    /// What the children hold to find their group: one weak reference per group, not one per
    /// child (an object with weak references is slower to release, and each weak reference costs).
    final let link = Link()

    /// The queue that runs the children once the group started.
    private final var childQueue: OpQueue { link.queue }

    /// Leads a child to its group without keeping the group alive, and holds the group's queue of
    /// children (the queue of a child that the group runs: see ``OpStateMachine/Membership``).
    final class Link: @unchecked Sendable {
        // @unchecked Sendable: `group` is written once, in the group's initializer, before the
        // group (and so the link) can reach another thread; afterwards it is only read (the
        // runtime makes reading a weak reference safe against the object's release). `queue` is
        // immutable and thread-safe.
        weak var group: GroupOp?
        /// The group's queue of children: not in the ``QueueRegistry``, and it holds its group
        /// only while the group runs (``OpQueue/owningGroup``).
        let queue = OpQueue(childrenOf: ())
    }

    /// Where the group is in its life, as far as its children are concerned.
    private enum Phase {
        /// Not started: children added now wait for the start.
        case waitingForStart
        /// ``execute()`` is handing the waiting children to the queue: the group cannot finish yet.
        case starting
        /// Running: children added now are scheduled at once; the group finishes after the last.
        case running
        /// Finished: no child may be added.
        case finished
    }

    /// A child that has not finished, with its place in the order of addition.
    private struct Child {
        let operation: Op
        let order: Int
    }

    private struct State {
        /// The children that have not finished for good (they are released as they finish), by
        /// identity, each with its place in the order of addition.
        var unfinished: [ObjectIdentifier: Child] = [:]
        /// How many children were ever added.
        var addedCount = 0
        /// How many children finished for good.
        var finishedCount = 0
        /// Children added before the group started, added to the child queue when it starts.
        var waitingForStart: [Op] = []
        var phase = Phase.waitingForStart
        var cancelsChildrenOnFailure = false
        var childErrorPolicy = ChildErrorPolicy.record
        /// The errors of the first children that failed, in the order they failed (at most
        /// ``GroupError/errorLimit``).
        var errors: [any Error] = []
        /// How many children failed after `errors` was full.
        var droppedErrorCount = 0
        /// Children let go whose ``GroupOp/childDidFinish(_:)`` has not returned: the group
        /// cannot finish yet (a `RetryOp` adds its next attempt there).
        var finishedChildrenBeingHandled = 0

        /// The unfinished children, in no order (sorted outside the lock: see ``inOrder(_:)``).
        var unfinishedChildren: [Child] { Array(unfinished.values) }

        /// The group finishes if it runs and every child has finished: returns what it reports.
        mutating func finishIfDone() -> Outcome? {
            guard phase == .running, unfinished.isEmpty, finishedChildrenBeingHandled == 0 else { return nil }
            phase = .finished
            unfinished = [:]   // releases the storage, which may be large after a burst
            return Outcome(childCount: addedCount, errors: errors, droppedErrorCount: droppedErrorCount)
        }
    }

    /// What a group that finished reports.
    private struct Outcome {
        let childCount: Int
        let errors: [any Error]
        let droppedErrorCount: Int
    }

    /// Creates a group of `operations` (more can be added with ``addChild(_:)``).
    ///
    /// - Important: Each operation must be free: in no queue, a child of no group, not started,
    ///   and listed once; see ``addChildren(_:)``.
    public init(operations: [Op] = []) {
        super.init()
        link.group = self
        withState { $0.runEvenWhenCancelled() }
        addChildren(operations)
    }

    // MARK: Children

    /// The children that have not finished, in the order they were added.
    ///
    /// The group lets each child go once it has finished and its completion block has returned, so
    /// that a group that runs for a long time, adding children as it goes, holds only the work in
    /// progress. Before the group starts, this lists every child; while it runs, those that wait
    /// or run; once it has finished, nothing. ``childCount`` and ``finishedChildCount`` count every
    /// child of the group's life.
    ///
    /// - Complexity: O(*n* log *n*), where *n* is the number of children that have not finished.
    public final var children: [Op] {
        GroupOp.inOrder(state.withLockedValue { $0.unfinishedChildren })
    }

    /// How many children the group was given over its life, finished ones included.
    public final var childCount: Int {
        state.withLockedValue { $0.addedCount }
    }

    /// How many children have finished and had their completion blocks return (the group no
    /// longer holds them).
    public final var finishedChildCount: Int {
        state.withLockedValue { $0.finishedCount }
    }

    /// `children` in the order they were added.
    private static func inOrder(_ children: [Child]) -> [Op] {
        children.sorted { $0.order < $1.order }.map(\.operation)
    }

    /// Adds a child. Before the group starts, it waits for the start; while the group runs, it is
    /// scheduled at once. If the group is cancelled, the child is cancelled too.
    ///
    /// - Important: `operation` must be free: in no queue, a child of no group (this one included:
    ///   a child is added once), not started. Adding one that is not, the group itself or one of
    ///   its ancestors, or adding a child once the group finished, traps.
    public final func addChild(_ operation: Op) {
        addChildren([operation])
    }

    /// Adds children; see ``addChild(_:)``.
    public final func addChildren(_ operations: [Op]) {
        guard !operations.isEmpty else { return }
        // The group's observers hear of each child before it joins (they may still change it)
        // and after; one load tells whether it has any.
        let observers = flags.load(ordering: .relaxed) & Flags.observed != 0 ? withState({ $0.observers }) : nil
        if let observers {
            for operation in operations { observers.post(.willAdd(operation), from: self) }
        }
        let added = operations
        let ancestors = self.ancestors
        for operation in operations {
            if operation === self || ancestors.contains(where: { $0 === operation }) {
                misuse("\(operation) was added as a child of \(self), which it contains (or is): a group cannot be nested in itself.")
            }
            if let refusal = operation.withState({ $0.join(self) }) {
                refuse(operation, refusal)
            }
        }
        let operations = operations + joinConditionDependencies(of: operations, ancestors: ancestors)
        let outcome: (startsNow: Bool, cancelled: Bool)? = state.withLockedValue { state in
            guard state.phase != .finished else { return nil }
            if state.unfinished.isEmpty {
                // One allocation for a group made with its children (not on every addition: a
                // capacity reserved one more at a time would copy the table each time).
                state.unfinished.reserveCapacity(operations.count)
            }
            for operation in operations {
                state.unfinished[ObjectIdentifier(operation)] = Child(operation: operation, order: state.addedCount)
                state.addedCount += 1
            }
            // Read with the lock held: `cancel()` marks the group cancelled before it takes the
            // children under this lock, so a child added here is either in its list or sees it.
            let cancelled = isCancelled
            if state.phase == .waitingForStart {
                state.waitingForStart += operations
                return (false, cancelled)
            }
            return (true, cancelled)
        }
        guard let outcome else {
            misuse("A child was added to \(self) after it finished. Add children before the group finishes (from a child of the group while it runs, for example), or put the work in a new group.")
        }
        DependencyCycles.groupChildrenJoined(operations, group: self)
        if outcome.cancelled {
            for operation in operations { operation.cancel() }
        }
        if outcome.startsNow {
            run(operations)
        }
        if let observers {
            for operation in added { observers.post(.didAdd(operation), from: self) }
        }
    }

    /// The operations that the conditions of `children` (and of those, in turn) contributed as
    /// dependencies (``OpCondition/dependency(_:)``), made children of this group as `children`
    /// join it, as a queue adds them with the operation: those that are free. One that is in a
    /// queue, a child of a group or started already stays where it is.
    private final func joinConditionDependencies(of children: [Op], ancestors: [GroupOp]) -> [Op] {
        var joined: [Op] = []
        var pending = children
        while let child = pending.popLast() {
            for dependency in child.withState({ $0.extras?.conditionDependencies ?? [] }) {
                guard dependency !== self, !ancestors.contains(where: { $0 === dependency }),
                      dependency.withState({ $0.join(self) }) == nil else { continue }
                joined.append(dependency)
                pending.append(dependency)
            }
        }
        return joined
    }

    /// Traps: `operation` cannot become a child of this group.
    private final func refuse(_ operation: Op, _ refusal: OpStateMachine.JoinRefusal) -> Never {
        switch refusal {
        case .inQueue(let queue):
            misuse("\(operation) was added as a child of \(self), but it is in a queue already (\(queue)). An operation is either in a queue or a child of a group: add it to one of them, once; to run the work in the group, add a new operation.")
        case .child(of: let current?) where current === self:
            misuse("\(operation) was added as a child of \(self) twice. A child is added once: remove the repeated addChild(_:), or the repeat from the list of operations.")
        case .child(of: let current):
            misuse("\(operation) was added as a child of \(self), but it is a child of \(current.map { "\($0)" } ?? "another group") already. An operation belongs to one group: add a new operation to this one.")
        case .started:
            misuse("\(operation) was added as a child of \(self), but it has started or finished. A child is added before it starts: create a new operation.")
        }
    }

    /// Runs `children` in the child queue, which tells the group when each is finished for good
    /// (``OpQueue/owningGroup``). A child that was started by hand meanwhile is waited for instead.
    /// Only adds them: any drainer that they need runs as a job of its own, never on this thread.
    private final func run(_ children: [Op]) {
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
        if !queued.isEmpty {
            childQueue.enqueue(queued)
        }
    }

    /// A child finished with `error`, before its dependents are told: unless the
    /// ``childErrorPolicy`` says otherwise, the error is listed and, with
    /// ``cancelsChildrenOnFailure``, the other children are cancelled at the first failure.
    final func childFailed(_ child: Op, error childError: any Error) {
        let error: any Error
        switch state.withLockedValue({ $0.childErrorPolicy }) {
        case .record:
            error = childError
        case .ignore:
            return
        case .transform(let transform):
            // User code, with no lock held.
            guard let transformed = transform(child, childError) else { return }
            error = transformed
        }
        let cancelOthers: [Child] = state.withLockedValue { state in
            let isFirst = state.errors.isEmpty && state.droppedErrorCount == 0
            if state.errors.count < GroupError.errorLimit {
                state.errors.append(error)
            } else {
                state.droppedErrorCount += 1
            }
            return isFirst && state.cancelsChildrenOnFailure ? state.unfinishedChildren : []
        }
        for other in GroupOp.inOrder(cancelOthers) where other !== child {
            other.cancel()
        }
    }

    /// A child is finished for good (it left the child queue): the group lets it go at once, and
    /// finishes after the last (and after ``childDidFinish(_:)`` returned for each).
    final func childFinished(_ child: Op) {
        DependencyCycles.groupChildLeft(child, group: self)
        let released: Child? = state.withLockedValue { state in
            let released = state.unfinished.removeValue(forKey: ObjectIdentifier(child))
            if released != nil {
                state.finishedCount += 1
                let capacity = state.unfinished.capacity
                if capacity > 64 && state.unfinished.count * 8 < capacity {
                    // After a burst of children: storage proportional to those left.
                    state.unfinished = Dictionary(uniqueKeysWithValues: state.unfinished.map { ($0.key, $0.value) })
                }
            }
            state.finishedChildrenBeingHandled += 1
            return released
        }
        withExtendedLifetime(released) {}   // released outside the lock (the caller holds `child`)
        childDidFinish(child)
        let outcome = state.withLockedValue { state -> Outcome? in
            state.finishedChildrenBeingHandled -= 1
            return state.finishIfDone()
        }
        if let outcome {
            finishGroup(outcome)
        }
    }

    /// Called when a child is finished for good, after the group let it go and before the group
    /// may finish: a child added here keeps the group running. No lock is held.
    func childDidFinish(_ child: Op) {}

    /// The group's error once every child finished: a ``GroupError`` listing the children's
    /// errors (`droppedErrorCount` more failed), or `nil` if none failed.
    func failure(fromChildErrors errors: [any Error], droppedErrorCount: Int) -> (any Error)? {
        errors.isEmpty ? nil : GroupError(errors: errors, droppedErrorCount: droppedErrorCount)
    }

    private final func finishGroup(_ outcome: Outcome) {
        childQueue.withLock { childQueue.owningGroup = nil }   // ends the loop group → queue → group
        // The progress keeps the final counts: it may outlive the group.
        withState { $0.existingProgress }?.groupDidFinish(childCount: outcome.childCount)
        if let failure = failure(fromChildErrors: outcome.errors, droppedErrorCount: outcome.droppedErrorCount) {
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

    /// Whether the group starts no new children (`false` by default): set it to hold them back,
    /// before or while the group runs; the children that run go on. ProcedureKit's
    /// `GroupProcedure.isSuspended`.
    ///
    /// ```swift
    /// let sync = GroupOp(operations: uploads)
    /// sync.isSuspended = true            // the uploads wait while the network is down
    /// queue.addOperation(sync)
    /// network.onReachable { sync.isSuspended = false }
    /// ```
    ///
    /// The group does not finish while it is suspended with children waiting. Cancelling it
    /// resumes it, so that it finishes.
    public final var isSuspended: Bool {
        get { childQueue.isSuspended }
        set { childQueue.isSuspended = newValue }
    }

    /// What the group does with the errors of children that fail (``ChildErrorPolicy/record`` by
    /// default: the group fails with a ``GroupError`` listing them).
    ///
    /// ```swift
    /// let refresh = GroupOp(operations: feeds.map(FetchFeed.init))
    /// refresh.childErrorPolicy = .transform { _, error in
    ///     error is NotModified ? nil : error      // an unchanged feed is not a failure
    /// }
    /// ```
    ///
    /// Set it before the children can fail (before the group starts); it applies to the errors
    /// of children that finish afterwards.
    public final var childErrorPolicy: ChildErrorPolicy {
        get { state.withLockedValue { $0.childErrorPolicy } }
        set { state.withLockedValue { $0.childErrorPolicy = newValue } }
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

    /// The group's progress, rolled up from its children (see ``OpProgress``): the counts, and
    /// the fractions of the children that have not finished.
    final var childProgress: ChildProgress {
        let (unfinished, total, finishedCount, groupFinished) = state.withLockedValue { state in
            (state.phase == .finished ? [] : state.unfinishedChildren, state.addedCount, state.finishedCount,
             state.phase == .finished)
        }
        if groupFinished {
            return ChildProgress(total: total, finished: total, fraction: 1)
        }
        var finished = finishedCount
        var units = Double(finishedCount)
        for child in unfinished {
            let child = child.operation
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
        let fraction = total == 0 ? 0 : min(units / Double(total), Double(1).nextDown)
        return ChildProgress(total: total, finished: finished, fraction: fraction)
    }

    /// Has the group's queue count the group's progress while it runs.
    final func reportProgressToQueue() {
        reportProgress(progress)
    }

    /// The exclusivity categories of the children, and of theirs (a group asks for them with its
    /// own: see ``OpCondition/mutuallyExclusive(_:)``). Finished children need none.
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
        children.filter { !$0.isFinished }
    }

    // MARK: Running

    /// Not started on a thread of Swift's cooperative pool (see ``OpQueue/drainStartsHere()``):
    /// the group's own `execute()` only adds its children to its queue, but a subclass's
    /// override is code of its own, which runs on the queue's threads, as `main()` does.
    override var startsBriefly: Bool { false }

    /// Starts the children: they are added to the group's own queue, with the group's quality of
    /// service and its queue's underlying Dispatch queue, and run there; the group finishes when
    /// the last child has. This returns at once: no child runs on the calling thread before it
    /// has returned, so a subclass that overrides it (to note the start, say) may do more after
    /// calling `super.execute()`, which it must call. Add work as children.
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
        let (waiting, toCancel): ([Op], [Child]) = state.withLockedValue { state in
            state.phase = .starting
            let waiting = state.waitingForStart
            state.waitingForStart = []
            return (waiting, isCancelled ? state.unfinishedChildren : [])
        }
        for child in GroupOp.inOrder(toCancel) {
            child.cancel()
        }
        // A queue that reports progress counts the group by its fraction while it runs.
        if let queue, !queue.isGroupQueue, hasProgress || queue.progress.isReportingQueue {
            reportProgressToQueue()
        }
        run(waiting)
        // Until now the group could not finish (the waiting children were being added).
        let outcome = state.withLockedValue { state -> Outcome? in
            state.phase = .running
            return state.finishIfDone()
        }
        if let outcome {
            finishGroup(outcome)
        }
    }

    /// Cancels the group and every child that has not finished; children added later start
    /// cancelled. A suspended group is resumed, so that its children, cancelled, finish at once
    /// (without running) and the group with them, rather than waiting for a resumption.
    open override func cancel() {
        super.cancel()
        // After the group reads as cancelled: a child added from now on sees it (see
        // `addChildren(_:)`), and those added before are in this list.
        let children = state.withLockedValue { $0.unfinishedChildren }
        for child in GroupOp.inOrder(children) {
            child.cancel()
        }
        if childQueue.isSuspended {
            childQueue.isSuspended = false
        }
    }
}
