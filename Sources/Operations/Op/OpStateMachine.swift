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
    enum Lifecycle: UInt8, Sendable {
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

    /// The steps between "every dependency finished" and "on the ready list" (see ``Gate``).
    enum Gate: UInt8, Sendable {
        /// Nothing to pass: the operation goes on the ready list as soon as it is ready.
        case open
        /// Conditions or an exclusivity category wait to be passed, once the operation is ready.
        case closed
        /// The conditions are being evaluated.
        case evaluating
        /// The conditions passed; the exclusivity categories are asked for.
        case waitingForExclusivity
    }

    // MARK: Storage
    //
    // A pending operation is a benchmark (a million of them wait in a suspended queue), so the
    // machine is kept to 29 bytes: the references first, then the small fields, which leave the
    // operation's own one-byte fields room in the tail. The yes-or-no facts share one byte
    // (``Bits``), the lifecycle and the gate another, and what only operations with dependencies
    // or dependents use is in ``Links``, allocated on first use like ``Extras``.

    /// The queue the operation was added to; kept until it completes.
    private(set) var queue: OpQueue?
    private(set) var extras: Extras?
    /// The dependency lists, once the operation has a dependency or a dependent.
    private(set) var links: Links?
    private(set) var ticket: Op.Ticket = 0
    private var bits: Bits = []
    /// ``lifecycle`` in the low two bits, ``gate`` in the next two.
    private var phase: UInt8 = 0
    private(set) var priority: Op.QueuePriority = .normal

    /// The machine's yes-or-no facts, one bit each.
    struct Bits: OptionSet {
        let rawValue: UInt8
        static let cancelled = Bits(rawValue: 1 << 0)
        static let observed = Bits(rawValue: 1 << 1)
        static let exclusive = Bits(rawValue: 1 << 2)
        static let runsWhenCancelled = Bits(rawValue: 1 << 3)
        static let groupChild = Bits(rawValue: 1 << 4)
        static let scheduled = Bits(rawValue: 1 << 5)
        static let executed = Bits(rawValue: 1 << 6)
        static let hadDependencies = Bits(rawValue: 1 << 7)
    }

    /// The dependencies and dependents of an operation that has some.
    final class Links: @unchecked Sendable {
        // @unchecked Sendable: like the machine that holds it, only touched with the operation's
        // lock held. Unchecked exclusivity on the hot path (the lock serializes every access),
        // checked in the checked build, as for the machine itself (see `Op`).
        #if OPERATIONS_INTERNAL_CHECKS
        var dependencies = SmallList<Op>()
        var dependents = DependentList()
        var dependencyVersion: UInt32 = 0
        var unfinishedDependencyCount: Int32 = 0
        var hasNewerDependency = false
        var weakensEveryDependency = false
        #else
        @exclusivity(unchecked) var dependencies = SmallList<Op>()
        @exclusivity(unchecked) var dependents = DependentList()
        @exclusivity(unchecked) var dependencyVersion: UInt32 = 0
        @exclusivity(unchecked) var unfinishedDependencyCount: Int32 = 0
        @exclusivity(unchecked) var hasNewerDependency = false
        @exclusivity(unchecked) var weakensEveryDependency = false
        #endif
    }

    /// The links, allocated if needed.
    private mutating func ensureLinks() -> Links {
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

    private(set) var isCancelled: Bool {
        get { has(.cancelled) }
        set { set(.cancelled, newValue) }
    }
    /// Whether the operation has ``OpObserver``s (mirrored in ``Op/Flags/observed``).
    private(set) var hasObservers: Bool {
        get { has(.observed) }
        set { set(.observed, newValue) }
    }
    /// Whether the operation asks for exclusivity categories, which it gives back when it finishes.
    private(set) var isExclusive: Bool {
        get { has(.exclusive) }
        set { set(.exclusive, newValue) }
    }
    /// Whether the body runs even when the operation was cancelled before it started: a
    /// ``GroupOp`` runs to let its (cancelled) children finish.
    private(set) var runsWhenCancelled: Bool {
        get { has(.runsWhenCancelled) }
        set { set(.runsWhenCancelled, newValue) }
    }
    /// Whether the operation is a group's child (its group learns of a failure as it finishes).
    private(set) var isGroupChild: Bool {
        get { has(.groupChild) }
        set { set(.groupChild, newValue) }
    }
    /// Whether a ready-list entry with the current ticket is in the queue.
    private(set) var isScheduled: Bool {
        get { has(.scheduled) }
        set { set(.scheduled, newValue) }
    }
    /// Whether the body ever started (false for an operation cancelled before it started).
    private(set) var hasExecuted: Bool {
        get { has(.executed) }
        set { set(.executed, newValue) }
    }
    /// Whether the operation ever had a dependency (mirrored in ``Op/Flags/hadDependencies``).
    /// One that never had any is on no loop of dependencies, so a finished operation can keep
    /// holding it strongly (see ``Op/settleDependencies()``).
    private(set) var hasHadDependencies: Bool {
        get { has(.hadDependencies) }
        set { set(.hadDependencies, newValue) }
    }
    private(set) var lifecycle: Lifecycle {
        get { Lifecycle(rawValue: phase & 0b11).unsafelyUnwrapped }
        set { phase = phase & ~0b11 | newValue.rawValue }
    }
    /// Whether conditions or exclusivity still stand between readiness and the ready list. Only
    /// an operation in a queue passes them there (a manual start passes them on the calling
    /// thread); a cancelled operation skips them.
    private(set) var gate: Gate {
        get { Gate(rawValue: phase >> 2 & 0b11).unsafelyUnwrapped }
        set { phase = phase & 0b11 | newValue.rawValue << 2 }
    }
    /// How many dependencies hold the operation back (each lists it as a dependent).
    private(set) var unfinishedDependencyCount: Int {
        get { links.map { Int($0.unfinishedDependencyCount) } ?? 0 }
        set { if links != nil || newValue != 0 { ensureLinks().unfinishedDependencyCount = Int32(newValue) } }
    }

    // MARK: Links

    /// The dependencies, held strongly, in the order they were added (until they are settled).
    private(set) var dependencyList: SmallList<Op> {
        _read {
            if let links { yield links.dependencies } else { yield SmallList() }
        }
        set { if links != nil || !newValue.isEmpty { ensureLinks().dependencies = newValue } }
        _modify { yield &ensureLinks().dependencies }
    }
    /// Whether a dependency was created after this operation (a "backward" edge, by serial
    /// number): only such a dependency can close a loop of strong references.
    private(set) var hasNewerDependency: Bool {
        get { links?.hasNewerDependency ?? false }
        set { if links != nil || newValue { ensureLinks().hasNewerDependency = newValue } }
    }
    /// Whether every dependency is held weakly once the operation is finished: it got one while
    /// a finished, older operation held it strongly (see ``Op/settleDependencies()``).
    private(set) var weakensEveryDependency: Bool {
        get { links?.weakensEveryDependency ?? false }
        set { if links != nil || newValue { ensureLinks().weakensEveryDependency = newValue } }
    }
    /// Counts the changes of the dependency list, so that a check made twice can tell that the
    /// list did not change in between (see ``DependencyCycle``). Wraps.
    private(set) var dependencyVersion: UInt32 {
        get { links?.dependencyVersion ?? 0 }
        set { if links != nil || newValue != 0 { ensureLinks().dependencyVersion = newValue } }
    }

    /// The dependencies, in the order they were added (a settled one that was released is gone).
    var dependencies: [Op] {
        if let settled = extras?.settledDependencies {
            return settled.compactMap(\.operation)
        }
        return dependencyList.array
    }
    /// Operations that counted this one as an unfinished dependency; emptied when it finishes.
    /// Not retained, like Foundation's: a dependent that nobody keeps (not in a queue, no
    /// reference) is released even though this operation has not finished, and removes itself
    /// from the list as it goes (see ``DependentLink``).
    var dependents: DependentList {
        _read {
            if let links { yield links.dependents } else { yield DependentList() }
        }
    }
    /// State that most operations never use, allocated on first use so that a pending operation
    /// stays small (a million pending operations are a benchmark).
    final class Extras: @unchecked Sendable {
        // @unchecked Sendable: like the machine that holds it, only touched with the operation's
        // lock held. The fields read on hot paths (building a large fan-in, every transition of
        // an operation with extras, passing conditions) are unchecked for exclusivity, like the
        // machine, and checked in the checked build (see `Op`).
        var completionBlock: (@Sendable () -> Void)?
        var error: (any Error)?
        var waiters: [@Sendable () -> Void] = []
        var name: String?
        var qualityOfService: DispatchQoS.QoSClass = .default
        var threadPriority = 0.5
        #if OPERATIONS_INTERNAL_CHECKS
        var registry: ObserverRegistry?
        /// The dependencies as a set, kept once there are many, so that adding one stays O(1).
        var dependencySet: Set<ObjectIdentifier>?
        /// The dependencies of a finished operation of which some are held weakly, replacing
        /// `dependencyList` (see ``OpStateMachine/weaken(_:)``).
        var settledDependencies: [SettledDependency]?
        /// The conditions, in the order they were added.
        var conditions: [OpCondition] = []
        #else
        @exclusivity(unchecked) var registry: ObserverRegistry?
        /// The dependencies as a set, kept once there are many, so that adding one stays O(1).
        @exclusivity(unchecked) var dependencySet: Set<ObjectIdentifier>?
        /// The dependencies of a finished operation of which some are held weakly, replacing
        /// `dependencyList` (see ``OpStateMachine/weaken(_:)``).
        @exclusivity(unchecked) var settledDependencies: [SettledDependency]?
        /// The conditions, in the order they were added.
        @exclusivity(unchecked) var conditions: [OpCondition] = []
        #endif
        /// Whether a condition is `async` (the conditions are then evaluated in a task).
        var hasAsynchronousConditions = false
        /// The error of a `cancel(with:)` whose cancellation has not happened yet.
        var pendingCancellationError: (any Error)?
        /// Operations that conditions contributed as dependencies, to be added to the operation's
        /// queue with it (see ``OpCondition/dependency(_:)``).
        var conditionDependencies: [Op] = []
        /// The mutual-exclusivity categories asked for by the conditions, sorted, without repeats.
        var exclusivityCategories: [String] = []
        /// The link to the group the operation is a child of (shared by its children).
        var groupLink: GroupOp.Link?
        /// The ``OpObserver``s and the order of their callbacks.
        var observers: ObserverMailbox?
        /// ``Op/timeout``, and whether its ``TimeoutTracker`` observes the operation.
        var timeout: Duration?
        var hasTimeoutTracker = false
        /// ``Op/progress``, once asked for.
        var progress: OpProgress?
        /// A ``BlockOp``'s blocks, once it has more than one.
        var blockList: BlockOp.BlockList?
    }

    /// A dependency of a finished operation: a newer one is held weakly, so that a loop of
    /// dependencies among finished operations does not keep them alive.
    enum SettledDependency {
        /// An older dependency, still held.
        case strong(Op)
        /// A newer dependency, held weakly.
        case weak(WeakOp)

        /// The operation, if it is still alive.
        var operation: Op? {
            switch self {
            case .strong(let operation): operation
            case .weak(let reference): reference.operation
            }
        }

        /// Whether this names `operation` (compared without loading a weak reference).
        func names(_ operation: Op) -> Bool {
            switch self {
            case .strong(let held): held === operation
            case .weak(let reference): reference.serial == operation.serial
            }
        }
    }

    /// From this many dependencies on, a set answers "is it already a dependency?".
    static let dependencySetThreshold = 16

    /// Whether `operation` is one of the dependencies.
    func lists(_ operation: Op) -> Bool {
        if let extras {
            // A set while there are many (never together with the settled list).
            if let set = extras.dependencySet {
                return set.contains(ObjectIdentifier(operation))
            }
            if let settled = extras.settledDependencies {
                return settled.contains { $0.names(operation) }
            }
        }
        guard let links else { return false }
        return links.dependencies.contains { $0 === operation }
    }

    /// The extras, allocated if needed.
    mutating func ensureExtras() -> Extras {
        if let extras { return extras }
        let created = Extras()
        extras = created
        return created
    }

    var completionBlock: (@Sendable () -> Void)? { extras?.completionBlock }
    var error: (any Error)? { extras?.error }
    var waiters: [@Sendable () -> Void] { extras?.waiters ?? [] }

    /// The operation's name (not part of the state machine's logic; kept here to share the lock).
    var name: String? {
        get { extras?.name }
        set { if newValue != nil || extras != nil { ensureExtras().name = newValue } }
    }

    /// The operation's thread priority, kept but not applied (kept here to share the lock).
    var threadPriority: Double {
        get { extras?.threadPriority ?? 0.5 }
        set { ensureExtras().threadPriority = newValue }
    }

    /// The operation's quality of service (kept here to share the lock).
    var qualityOfService: DispatchQoS.QoSClass {
        get { extras?.qualityOfService ?? .default }
        set { ensureExtras().qualityOfService = newValue }
    }

    /// The operation's observers, if any ever registered.
    var registry: ObserverRegistry? { extras?.registry }

    /// The operation's observer registry, created on first use.
    mutating func ensureRegistry() -> ObserverRegistry {
        let extras = ensureExtras()
        if let registry = extras.registry { return registry }
        let created = ObserverRegistry()
        extras.registry = created
        return created
    }
    init() {}

    /// Whether the operation may start: all dependencies finished, or it was cancelled
    /// (cancellation makes an operation ignore its dependencies so that it can finish soon).
    var isReady: Bool { isCancelled || unfinishedDependencyCount == 0 }

    var isExecuting: Bool { lifecycle == .executing }

    var isFinished: Bool {
        switch lifecycle {
        case .pending, .executing: false
        case .finishing, .finished: true
        }
    }

    var isEnqueued: Bool { queue != nil }

    /// The operation's conditions.
    var conditions: [OpCondition] { extras?.conditions ?? [] }

    /// The conditions, and whether one of them is `async`.
    var conditionsToEvaluate: (conditions: [OpCondition], isAsynchronous: Bool) {
        guard let extras else { return ([], false) }
        return (extras.conditions, extras.hasAsynchronousConditions)
    }

    /// The operation's exclusivity categories.
    var exclusivityCategories: [String] { extras?.exclusivityCategories ?? [] }

    /// The group the operation is a child of, if any.
    var group: GroupOp? { extras?.groupLink?.group }

    /// The observer mailbox, if an observer was ever added.
    var observers: ObserverMailbox? { extras?.observers }

    var timeout: Duration? {
        get { extras?.timeout }
        set { if newValue != nil || extras != nil { ensureExtras().timeout = newValue } }
    }

    var hasTimeoutTracker: Bool {
        get { extras?.hasTimeoutTracker ?? false }
        set { ensureExtras().hasTimeoutTracker = newValue }
    }

    /// The progress, if it was asked for.
    var existingProgress: OpProgress? { extras?.progress }

    mutating func keepProgress(_ progress: OpProgress) {
        ensureExtras().progress = progress
    }

    /// The observable flags, packed as in ``Op/Flags``.
    var flags: UInt8 {
        var value: UInt8 = hasHadDependencies ? Op.Flags.hadDependencies : 0
        if hasObservers { value |= Op.Flags.observed }
        if gate != .open { value |= Op.Flags.gated }
        if isCancelled { value |= Op.Flags.cancelled }
        if lifecycle == .executing { value |= Op.Flags.executing }
        if isFinished { value |= Op.Flags.finished }
        if isReady { value |= Op.Flags.ready }
        return value
    }

    // MARK: Readiness

    /// What a change of readiness asks the storage to do.
    enum ReadinessAction: Equatable {
        /// Nothing to do.
        case none
        /// The operation became ready while in a queue: push it on the queue's ready list.
        case schedule(OpQueue, Schedule)
        /// The operation became ready while in a queue, and its conditions (then its exclusivity
        /// categories) are to be passed before it goes on the ready list.
        case passGates

        static func == (lhs: ReadinessAction, rhs: ReadinessAction) -> Bool {
            switch (lhs, rhs) {
            case (.none, .none), (.passGates, .passGates): true
            case (.schedule(let q1, let s1), .schedule(let q2, let s2)): q1 === q2 && s1 == s2
            case (.none, _), (.schedule, _), (.passGates, _): false
            }
        }
    }

    /// Schedules the operation if it is ready, pending, in a queue and not already scheduled; one
    /// with gates still closed starts passing them instead.
    private mutating func scheduleIfReady() -> ReadinessAction {
        guard let queue, isReady, !isScheduled, lifecycle == .pending else { return .none }
        switch beginPassingGates() {
        case .open: break
        case .begun: return .passGates
        case .beingPassed: return .none
        }
        isScheduled = true
        return .schedule(queue, Schedule(priority: priority, ticket: ticket))
    }

    // MARK: Gates

    /// Where a ready operation stands with its gates.
    enum GateStep {
        /// Open (or skipped: a cancelled operation ignores them): it can go on.
        case open
        /// Closed until now: passing them begins (the gate moved to ``Gate/evaluating``).
        case begun
        /// Another thread is passing them.
        case beingPassed
    }

    /// Begins passing the gates of a ready operation if they are closed.
    private mutating func beginPassingGates() -> GateStep {
        guard gate != .open && !isCancelled else { return .open }
        guard gate == .closed else { return .beingPassed }
        gate = .evaluating
        return .begun
    }

    /// Adds a condition (and the exclusivity categories it asks for); refused (returns `false`)
    /// once the operation has started or its gates are being passed.
    mutating func addCondition(_ condition: OpCondition) -> Bool {
        guard lifecycle == .pending, gate == .open || gate == .closed else { return false }
        let extras = ensureExtras()
        extras.conditions.append(condition)
        if condition.isAsynchronous { extras.hasAsynchronousConditions = true }
        if condition.mayAskForMore {
            let categories = condition.exclusivityCategories
            if !categories.isEmpty {
                extras.exclusivityCategories = Array(Set(extras.exclusivityCategories + categories)).sorted()
                isExclusive = true
            }
            extras.conditionDependencies += condition.contributedDependencies
        }
        gate = .closed
        return true
    }

    /// Starts evaluating the conditions of an operation that is about to be added to a queue,
    /// ready, with synchronous conditions only and no exclusivity or contributed dependencies: its
    /// queue then puts it on the ready list with the others it adds (see ``OpQueue/enqueue(_:)``).
    /// Returns the conditions to evaluate, or `nil` if the operation does not qualify.
    mutating func startPassingGatesEarly() -> [OpCondition]? {
        guard lifecycle == .pending, queue == nil, gate == .closed, isReady, !isCancelled, !isExclusive,
              let extras, !extras.hasAsynchronousConditions, extras.conditionDependencies.isEmpty else { return nil }
        gate = .evaluating
        return extras.conditions
    }

    /// The conditions were evaluated; `failure` is the error of the first that failed, if any.
    /// A failure cancels the operation (keeping an earlier error); a pass moves on to exclusivity,
    /// or opens the gate. Ignored if the operation moved on meanwhile (it was cancelled).
    mutating func conditionsEvaluated(failure: (any Error)?) -> (askExclusivity: Bool, readiness: ReadinessAction) {
        guard lifecycle == .pending, gate == .evaluating else { return (false, .none) }
        if let failure {
            if error == nil { ensureExtras().error = failure }
            gate = .open
            isCancelled = true
            return (false, scheduleIfReady())
        }
        if isExclusive && !isCancelled {
            gate = .waitingForExclusivity
            return (true, .none)
        }
        gate = .open
        return (false, scheduleIfReady())
    }

    /// The exclusivity categories were granted: the gate opens. Returns `nil` if the operation no
    /// longer waits for them (it was cancelled and moved on): the caller gives them back.
    mutating func exclusivityGranted() -> ReadinessAction? {
        guard lifecycle == .pending, gate == .waitingForExclusivity else { return nil }
        gate = .open
        return scheduleIfReady()
    }

    /// Hands over the dependencies contributed by conditions, to be added to the queue.
    mutating func takeConditionDependencies() -> [Op] {
        defer { extras?.conditionDependencies = [] }
        return extras?.conditionDependencies ?? []
    }

    /// Makes the operation run its body even when cancelled before it started (for groups).
    mutating func runEvenWhenCancelled() {
        runsWhenCancelled = true
    }

    /// Marks the operation observed and returns its observer mailbox, created on first use.
    mutating func ensureObservers() -> ObserverMailbox {
        let extras = ensureExtras()
        hasObservers = true
        if let observers = extras.observers { return observers }
        let created = ObserverMailbox()
        extras.observers = created
        return created
    }

    /// Makes `group` the operation's group. Returns the group it already had, if any (the caller
    /// traps), or `nil` if it is now `group`'s child.
    mutating func join(_ group: GroupOp) -> GroupOp? {
        if let current = extras?.groupLink?.group { return current }
        ensureExtras().groupLink = group.link
        isGroupChild = true
        return nil
    }

    /// Prepares `cancel(with:)`: unless the operation has an error or is finished (the first
    /// error wins), `error` becomes its error now if it is cancelled already (returns `true`), or
    /// with the cancellation that follows (``cancel()`` takes it), so that an error never shows
    /// on an operation that is not cancelled.
    mutating func recordCancellationError(_ error: any Error) -> Bool {
        guard !isFinished, self.error == nil else { return false }
        if isCancelled {
            ensureExtras().error = error
            return true
        }
        let extras = ensureExtras()
        if extras.pendingCancellationError == nil { extras.pendingCancellationError = error }
        return false
    }

    // MARK: Dependencies

    /// The result of adding a dependency.
    enum AddDependencyResult: Equatable {
        /// The dependency was already there; nothing changed.
        case alreadyPresent
        /// The dependency was recorded. `counted` is true if it now holds the operation back.
        case added(counted: Bool)
    }

    /// Records `dependency`. It holds the operation back only if it is unfinished and the
    /// operation has not started (adding a dependency to a started operation has no effect).
    /// `isNewer` says whether the dependency was created after this operation. For an operation
    /// that is finished for good, `holdsWeakly` says whether to hold the new dependency weakly
    /// (see ``Op/addDependency(_:)``).
    mutating func addDependency(_ dependency: Op, dependencyIsUnfinished: Bool, isNewer: Bool,
                                holdsWeakly: Bool = false) -> AddDependencyResult {
        if lists(dependency) {
            return .alreadyPresent
        }
        // The links are used directly: this is the hot path of building a graph.
        let links = ensureLinks()
        links.dependencyVersion &+= 1
        hasHadDependencies = true
        if isNewer { links.hasNewerDependency = true }
        let isWeak = lifecycle == .finished && (holdsWeakly || links.weakensEveryDependency)
        if isWeak {
            weaken([])
            settle()
        }
        if let settled = extras?.settledDependencies {
            extras!.settledDependencies = settled + [isWeak ? .weak(WeakOp(dependency)) : .strong(dependency)]
            return .added(counted: false)
        }
        links.dependencies.append(dependency)
        if let extras, extras.dependencySet != nil {
            extras.dependencySet!.insert(ObjectIdentifier(dependency))
        } else if links.dependencies.count >= Self.dependencySetThreshold {
            ensureExtras().dependencySet = Set(links.dependencies.lazy.map(ObjectIdentifier.init))
        }
        let counts = dependencyIsUnfinished && lifecycle == .pending
        if counts {
            links.unfinishedDependencyCount += 1
            if gate == .open, let extras, !extras.conditions.isEmpty {
                // Passed early (see ``startPassingGatesEarly()``), before this dependency: the
                // conditions are evaluated again once it finished.
                gate = .closed
            }
        }
        return .added(counted: counts)
    }

    /// Called on the dependency's side of `addDependency`: remembers the dependent unless this
    /// operation has finished already. Returns whether the dependent must count it.
    mutating func addDependent(_ dependent: Op) -> Bool {
        switch lifecycle {
        case .pending, .executing:
            ensureLinks().dependents.append(DependentLink(dependent))
            return true
        case .finishing, .finished:
            return false
        }
    }

    /// Forgets the dependent whose serial number is `dependentSerial` (called on the
    /// dependency's side of `removeDependency`, and by a dependent being deinitialized).
    /// Returns whether it was still waiting for this operation.
    mutating func removeDependent(serial dependentSerial: UInt64) -> Bool {
        links?.dependents.remove(serial: dependentSerial) ?? false
    }

    /// Removes `dependency`; `wasCounted` says whether it was still holding the operation back.
    mutating func removeDependency(_ dependency: Op, wasCounted: Bool) -> (removed: Bool, action: ReadinessAction) {
        dependencyVersion &+= 1
        if let settled = extras?.settledDependencies {
            guard let index = settled.firstIndex(where: { $0.names(dependency) }) else { return (false, .none) }
            extras!.settledDependencies!.remove(at: index)
            return (true, .none)
        }
        guard lists(dependency), dependencyList.removeFirst(where: { $0 === dependency }) != nil else {
            return (false, .none)
        }
        extras?.dependencySet?.remove(ObjectIdentifier(dependency))
        if wasCounted {
            unfinishedDependencyCount -= 1
            return (true, scheduleIfReady())
        }
        return (true, .none)
    }

    /// One of the operations this one counted has finished.
    mutating func dependencyFinished() -> ReadinessAction {
        guard let links, links.unfinishedDependencyCount > 0 else {
            preconditionFailure("Internal inconsistency: dependency count underflow in \(lifecycle)")
        }
        links.unfinishedDependencyCount -= 1
        return scheduleIfReady()
    }

    // MARK: Queue membership

    /// What adding the operation to a queue asks the storage to do.
    enum EnqueueAction: Equatable {
        /// Put it on the ready list now.
        case schedule(Schedule)
        /// Keep it waiting; it is scheduled when it becomes ready.
        case wait
        /// It is ready; pass its conditions and exclusivity first (see ``Gate``).
        case passGates
        /// Trap: the operation cannot be added.
        case misuse(Misuse)
    }

    mutating func enqueue(in queue: OpQueue) -> EnqueueAction {
        if self.queue != nil { return .misuse(.enqueueWhileEnqueued) }
        switch lifecycle {
        case .pending:
            self.queue = queue
            if isReady {
                switch beginPassingGates() {
                case .open: break
                case .begun: return .passGates
                case .beingPassed: return .wait   // whoever passes them schedules it
                }
                isScheduled = true
                return .schedule(Schedule(priority: priority, ticket: ticket))
            }
            return .wait
        case .executing:
            return .misuse(.enqueueWhileExecuting)
        case .finishing, .finished:
            return .misuse(.enqueueWhenFinished)
        }
    }

    // MARK: Priority

    /// Changes the priority; an operation already on a ready list is moved to the new one.
    mutating func setPriority(_ newPriority: Op.QueuePriority) -> ReadinessAction {
        guard newPriority != priority else { return .none }
        priority = newPriority
        guard isScheduled, let queue else { return .none }
        ticket &+= 1
        return .schedule(queue, Schedule(priority: priority, ticket: ticket))
    }

    // MARK: Cancellation

    /// What cancelling asks the storage to do.
    struct CancelAction: Equatable {
        /// Whether this call cancelled the operation (false if it was cancelled or finished already).
        var didCancel: Bool
        /// Whether the operation was executing (asynchronous bodies are told to stop).
        var wasExecuting: Bool
        /// Scheduling made necessary because cancellation made the operation ready.
        var readiness: ReadinessAction
    }

    mutating func cancel() -> CancelAction {
        guard !isCancelled else { return CancelAction(didCancel: false, wasExecuting: false, readiness: .none) }
        switch lifecycle {
        case .finishing, .finished:
            return CancelAction(didCancel: false, wasExecuting: false, readiness: .none)
        case .pending, .executing:
            isCancelled = true
            if let extras, let pending = extras.pendingCancellationError {
                // From `cancel(with:)`: the error and the cancellation take effect together.
                extras.pendingCancellationError = nil
                if extras.error == nil {
                    extras.error = pending
                    record(.error, old: Optional<any Error>.none as Any, new: extras.error as Any)
                }
            }
            return CancelAction(didCancel: true, wasExecuting: lifecycle == .executing, readiness: scheduleIfReady())
        }
    }

    // MARK: Failing

    /// What ending the operation with an error asks the storage to do.
    enum FailAction {
        /// Nothing: the operation has started or finished already.
        case none
        /// The operation is cancelled and in a queue, which now finishes it without running it.
        case readiness(ReadinessAction)
        /// The operation was in no queue: it is finished now, without running.
        case finish(FinishAction)
    }

    /// Ends a pending operation with `error` (it is on a dependency cycle): it is cancelled and
    /// will not run. One that is in no queue is finished at once, since nothing else would start it.
    mutating func fail(with error: any Error) -> FailAction {
        // An operation already ended with an error (on an earlier cycle) keeps that error.
        guard lifecycle == .pending, self.error == nil else { return .none }
        ensureExtras().error = error
        isCancelled = true
        if queue == nil {
            return .finish(finish())
        }
        return .readiness(scheduleIfReady())
    }

    /// Records the error an executing body threw, unless the operation has one already (it was
    /// cancelled with an error, which says why the body stopped: the first error wins).
    mutating func recordError(_ error: any Error) {
        guard self.error == nil else { return }
        ensureExtras().error = error
    }

    // MARK: Starting

    /// What a start asks the storage to do.
    enum StartAction: Equatable {
        /// Run the body; the operation is now executing.
        case run
        /// The operation was cancelled before it started: it is finished without running.
        case finishWithoutRunning(FinishAction)
        /// `start()` on a finished operation does nothing.
        case ignore
        /// A manual start of an operation with conditions or exclusivity: pass them on the calling
        /// thread, then start again.
        case passGates
        /// The queue's ready-list entry is out of date (the priority changed, or the operation
        /// is not ready any more): give back the slot; the operation is rescheduled when due.
        case skip
        /// Trap.
        case misuse(Misuse)
    }

    /// A manual call of `start()`.
    mutating func startManually() -> StartAction {
        switch lifecycle {
        case .finishing, .finished:
            return .ignore
        case .executing:
            return .misuse(.startWhileExecuting)
        case .pending:
            if queue != nil { return .misuse(.startWhileEnqueued) }
            if !isReady { return .misuse(.startWhileNotReady) }
            switch beginPassingGates() {
            case .open: return begin()
            case .begun: return .passGates
            case .beingPassed: return .misuse(.startWhileExecuting)   // started twice at once
            }
        }
    }

    /// A start by the operation's queue, from a ready-list entry carrying `ticket`.
    mutating func startFromQueue(ticket entryTicket: Op.Ticket) -> StartAction {
        guard lifecycle == .pending, isScheduled, entryTicket == ticket else { return .skip }
        isScheduled = false
        guard isReady else { return .skip }
        return begin()
    }

    private mutating func begin() -> StartAction {
        if isCancelled && !runsWhenCancelled {
            return .finishWithoutRunning(finish())
        }
        lifecycle = .executing
        hasExecuted = true
        return .run
    }

    // MARK: Finishing

    /// What finishing asks the storage to do, in this order: tell the dependents, give the
    /// queue its slot back, run the completion block, then leave the queue and complete.
    struct FinishAction: Equatable {
        /// The first operation waiting for this one (kept apart so that the common case of one
        /// dependent needs no array); each dependent gets `dependencyFinished()`.
        var firstDependent: Op?
        /// The serial number of `firstDependent` (read without touching it: see
        /// ``Op/performFinish(_:releasesSlot:inDrainer:)``).
        var firstDependentSerial: UInt64 = 0
        /// Whether any dependent is waiting (read without touching `firstDependent`).
        var hasDependents = false
        /// The other operations waiting for this one.
        var otherDependents: [Op] = []
        /// The serial numbers of dependents that were waiting but have been released since.
        var releasedDependentSerials: [UInt64] = []
        /// The queue the operation runs in, if any.
        var queue: OpQueue?
        /// Whether a completion block is set; it is handed over by ``takeCompletionBlock()``.
        var hasCompletionBlock: Bool
        /// Whether the operation asked for exclusivity categories, to give back (or to stop
        /// waiting for) now.
        var releasesExclusivity = false
        /// Whether observers are to be told that the operation finished (the storage reads them,
        /// and the error, from the extras: rare, and kept out of this action, which every
        /// operation returns).
        var notifiesObservers = false
        /// Whether the operation's body ran (false if it was cancelled before it started).
        var hasExecuted = true
        /// Whether the operation is a group's child: a failure is reported to the group before
        /// the dependents are told.
        var isGroupChild = false

        /// Every operation waiting for this one.
        var dependents: [Op] {
            guard let firstDependent else { return [] }
            return [firstDependent] + otherDependents
        }

        static func == (lhs: FinishAction, rhs: FinishAction) -> Bool {
            lhs.dependents.count == rhs.dependents.count
                && zip(lhs.dependents, rhs.dependents).allSatisfy { $0 === $1 }
                && lhs.queue === rhs.queue && lhs.hasCompletionBlock == rhs.hasCompletionBlock
        }
    }

    /// Ends execution (synchronous ops when `main()` returns; asynchronous ones on `finish()`).
    mutating func finish() -> FinishAction {
        lifecycle = .finishing
        // Collected in locals and put together at the end: building the action in place from the
        // closure made the compiler copy it.
        var firstDependent: Op?
        var firstDependentSerial: UInt64 = 0
        var hasDependents = false
        var otherDependents: [Op] = []
        var releasedDependentSerials: [UInt64] = []
        links?.dependents.removeAll { operation, serial in
            if let operation {
                if !hasDependents {
                    firstDependent = operation
                    firstDependentSerial = serial
                    hasDependents = true
                } else {
                    otherDependents.append(operation)
                }
            } else {
                releasedDependentSerials.append(serial)
            }
        }
        return FinishAction(firstDependent: firstDependent, firstDependentSerial: firstDependentSerial,
                            hasDependents: hasDependents, otherDependents: otherDependents,
                            releasedDependentSerials: releasedDependentSerials, queue: queue,
                            hasCompletionBlock: completionBlock != nil, releasesExclusivity: isExclusive,
                            notifiesObservers: hasObservers, hasExecuted: hasExecuted, isGroupChild: isGroupChild)
    }

    /// `finish()` called by an asynchronous operation's own code: finishes it if it is executing.
    mutating func requestFinish() -> Result<FinishAction, MisuseError> {
        switch lifecycle {
        case .executing:
            return .success(finish())
        case .pending:
            return .failure(MisuseError(misuse: .finishWhenNotExecuting))
        case .finishing, .finished:
            return .failure(MisuseError(misuse: hasExecuted ? .finishTwice : .finishWithoutExecuting))
        }
    }

    /// Wraps a misuse so that it can travel in a `Result`.
    struct MisuseError: Error, Equatable {
        var misuse: Misuse
    }

    /// Hands over the completion block, clearing it (it runs once).
    mutating func takeCompletionBlock() -> (@Sendable () -> Void)? {
        defer { extras?.completionBlock = nil }
        return extras?.completionBlock
    }

    /// The completion block has returned (or there was none) and the operation has left its
    /// queue: it is finished for good. Returns the waiters to release, the queue (which the
    /// storage releases after unlocking), and whether some dependencies may have to be held
    /// weakly from now on (see ``Op/settleDependencies()``).
    mutating func complete() -> (waiters: [@Sendable () -> Void], queue: OpQueue?, settles: Bool) {
        precondition(lifecycle == .finishing, "Internal inconsistency: complete() in \(lifecycle)")
        lifecycle = .finished
        let result = (waiters, queue, hasNewerDependency || weakensEveryDependency)
        extras?.waiters = []
        queue = nil
        return result
    }

    /// The dependencies created after this operation (whose serial number is `serial`).
    func newerDependencies(than serial: UInt64) -> [Op] {
        dependencyList.array.filter { $0.serial > serial }
    }

    /// A finished, older operation holds this one strongly, and it has a dependency now: hold
    /// every dependency weakly once finished (at once, if it is finished already).
    mutating func weakenEveryDependency() {
        weakensEveryDependency = true
        weaken([])
    }

    /// Holds the dependencies in `operations` weakly from now on (every dependency, if
    /// `weakensEveryDependency`). Called once the operation is finished for good: it needs its
    /// dependencies no more, and only lists them.
    mutating func weaken(_ operations: Set<ObjectIdentifier>) {
        guard lifecycle == .finished, !operations.isEmpty || weakensEveryDependency else { return }
        settle()
        let every = weakensEveryDependency
        extras!.settledDependencies = extras!.settledDependencies!.map { dependency in
            guard case .strong(let operation) = dependency,
                  every || operations.contains(ObjectIdentifier(operation)) else { return dependency }
            return .weak(WeakOp(operation))
        }
    }

    /// Moves the dependencies to the list that can hold some of them weakly, if not done yet.
    private mutating func settle() {
        guard extras?.settledDependencies == nil else { return }
        let extras = ensureExtras()
        extras.settledDependencies = dependencyList.map { .strong($0) }
        extras.dependencySet = nil
        dependencyList = SmallList()
    }

    /// Empties the dependency list, returning the operations it held strongly: used when the
    /// operation is deallocated, to release long chains without deep recursion.
    mutating func takeDependencies() -> SmallList<Op> {
        var taken = dependencyList
        dependencyList = SmallList()
        unfinishedDependencyCount = 0
        if let extras {
            extras.dependencySet = nil
            if let settled = extras.settledDependencies {
                for case .strong(let dependency) in settled {
                    taken.append(dependency)
                }
                extras.settledDependencies = nil
            }
        }
        return taken
    }

    /// The dependencies that hold the operation back, which list it as a dependent (those
    /// that have not finished), when some do; otherwise empty.
    var unfinishedDependencies: [Op] {
        guard unfinishedDependencyCount > 0 else { return [] }
        return dependencies.filter { $0.flags.load(ordering: .acquiring) & Op.Flags.finished == 0 }
    }

    // MARK: Properties

    /// Sets the completion block, unless the operation has finished: the block it had then, if
    /// any, is the one that runs (or ran), and a block set later could never run. Returns whether
    /// the block was kept; the caller releases a refused one after unlocking.
    mutating func setCompletionBlock(_ block: (@Sendable () -> Void)?) -> Bool {
        guard !isFinished else { return false }
        if block != nil || extras != nil { ensureExtras().completionBlock = block }
        return true
    }

    /// Registers `waiter` to be called when the operation is finished for good. Returns `false`
    /// (without registering) if it already is.
    mutating func addWaiter(_ waiter: @escaping @Sendable () -> Void) -> Bool {
        guard lifecycle != .finished else { return false }
        ensureExtras().waiters.append(waiter)
        return true
    }
}
