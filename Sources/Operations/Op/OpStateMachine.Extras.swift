import Dispatch

extension OpStateMachine {
    /// State that most operations never use, allocated on first use so that a pending operation
    /// stays small (a million pending operations are a benchmark).
    final class Extras: @unchecked Sendable {
        // @unchecked Sendable: like the machine that holds it, only touched with the operation's
        // lock held. Every field is unchecked for exclusivity, like the machine (the lock is what
        // makes accesses exclusive), and checked in the checked build (see `Op`).
        #if OPERATIONS_INTERNAL_CHECKS
        var completionBlock: (@Sendable () -> Void)?
        var error: (any Error)?
        var waiters: [@Sendable () -> Void] = []
        var name: String?
        var qualityOfService: DispatchQoS.QoSClass = .default
        var threadPriority = 0.5
        /// The observers of both kinds (property observations and ``OpObserver``s) and their outbox.
        var registry: ObserverRegistry?
        /// The dependencies of a finished operation of which some are held weakly, replacing
        /// `dependencyList` (see ``OpStateMachine/weaken(_:)``).
        var settledDependencies: [SettledDependency]?
        /// The conditions, in the order they were added (the first inline: most operations with
        /// conditions have one, and it then costs no array).
        var conditions = SmallList<OpCondition>()
        /// Whether a condition is `async` (the conditions are then evaluated in a task).
        var hasAsynchronousConditions = false
        /// Whether a condition checks something: one that only asks for exclusivity categories
        /// (``OpCondition/mutuallyExclusive(_:)``) always passes, and is not evaluated.
        var hasConditionsToEvaluate = false
        /// The error of a `cancel(with:)` whose cancellation has not happened yet.
        var pendingCancellationError: (any Error)?
        /// Operations that conditions contributed as dependencies, to be added to the operation's
        /// queue with it (see ``OpCondition/dependency(_:)``).
        var conditionDependencies: [Op] = []
        /// The mutual-exclusivity categories asked for by the conditions, sorted, without repeats.
        var exclusivityCategories: [String] = []
        /// The operation's place in the order of exclusivity requests, given when its conditions
        /// passed (see ``ExclusivityStateMachine/nextSequence()``).
        var exclusivitySequence: UInt64 = 0
        /// Counts the operation's requests for its categories as its queue starts it (wraps):
        /// the news of a request's turn, or of its stepping aside, is for that request only, not
        /// for a later one the operation made since (see ``OpStateMachine/exclusivityTurnCame(generation:attempt:)``).
        var exclusivityAttempt: UInt32 = 0
        /// The gate's state besides ``OpStateMachine/gate``, once the operation passes
        /// conditions (see `OpStateMachine+Gates.swift`).
        var gateState: OpStateMachine.GateState?
        /// The counted categories (limits and rate limits) the conditions ask for, one per
        /// category, sorted by name (see ``LimitStateMachine``).
        var limits: [OpLimit] = []
        /// The category whose permit the operation holds without a record in the table (see
        /// ``LimitStateMachine/Category``), given back when it finishes.
        var heldPermit: LimitStateMachine.Category?
        /// Whether the operation may have a request in the table for its limit: it then asks the
        /// table again rather than taking a permit without it (a request that was offered its
        /// permit has it reserved). Set as it asks; cleared when it is granted.
        var mayBeInTable = false
        /// The box of ``timing``, allocated when it is first changed.
        var timingBox: TimingBox?
        /// Whether the operation's work is over (its body returned, or `finish()` was called):
        /// no timer applies to it any more. Kept out of the box: it is set for every operation
        /// with extras, and a timeout set afterwards must see it.
        var isTimingWorkOver = false
        /// ``Op/progress``, once asked for.
        var progress: OpProgress?
        /// A ``BlockOp``'s blocks, once it has more than one.
        var blockList: BlockOp.BlockList?
        /// The serial numbers of dependencies removed while their finish was on the way: that
        /// finish is ignored when it arrives (see ``OpStateMachine/removeDependency(_:wasCounted:)``).
        var ignoredFinishes: [UInt64] = []
        #else
        @exclusivity(unchecked) var completionBlock: (@Sendable () -> Void)?
        @exclusivity(unchecked) var error: (any Error)?
        @exclusivity(unchecked) var waiters: [@Sendable () -> Void] = []
        @exclusivity(unchecked) var name: String?
        @exclusivity(unchecked) var qualityOfService: DispatchQoS.QoSClass = .default
        @exclusivity(unchecked) var threadPriority = 0.5
        @exclusivity(unchecked) var registry: ObserverRegistry?
        @exclusivity(unchecked) var settledDependencies: [SettledDependency]?
        @exclusivity(unchecked) var conditions = SmallList<OpCondition>()
        @exclusivity(unchecked) var hasAsynchronousConditions = false
        @exclusivity(unchecked) var hasConditionsToEvaluate = false
        @exclusivity(unchecked) var pendingCancellationError: (any Error)?
        @exclusivity(unchecked) var conditionDependencies: [Op] = []
        @exclusivity(unchecked) var exclusivityCategories: [String] = []
        @exclusivity(unchecked) var exclusivitySequence: UInt64 = 0
        @exclusivity(unchecked) var exclusivityAttempt: UInt32 = 0
        @exclusivity(unchecked) var gateState: OpStateMachine.GateState?
        @exclusivity(unchecked) var limits: [OpLimit] = []
        @exclusivity(unchecked) var heldPermit: LimitStateMachine.Category?
        @exclusivity(unchecked) var mayBeInTable = false
        @exclusivity(unchecked) var timingBox: TimingBox?
        @exclusivity(unchecked) var isTimingWorkOver = false
        @exclusivity(unchecked) var progress: OpProgress?
        @exclusivity(unchecked) var blockList: BlockOp.BlockList?
        @exclusivity(unchecked) var ignoredFinishes: [UInt64] = []
        #endif

        /// ``Op/timeout``, ``Op/totalTimeout``, ``Op/clock`` and the arming of their timers: in a
        /// box of their own, allocated when first changed (they make up a third of the extras'
        /// size, and most operations with extras, such as those with a condition, have none).
        var timing: TimeoutState {
            get { timingBox?.state ?? TimeoutState() }
            _modify {
                let box = timingBox ?? TimingBox()
                timingBox = box
                yield &box.state
            }
        }
    }
}
