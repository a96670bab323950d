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
        /// The conditions, in the order they were added.
        var conditions: [OpCondition] = []
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
        /// ``Op/timeout`` and the arming of its timer.
        var timing = TimeoutState()
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
        @exclusivity(unchecked) var conditions: [OpCondition] = []
        @exclusivity(unchecked) var hasAsynchronousConditions = false
        @exclusivity(unchecked) var hasConditionsToEvaluate = false
        @exclusivity(unchecked) var pendingCancellationError: (any Error)?
        @exclusivity(unchecked) var conditionDependencies: [Op] = []
        @exclusivity(unchecked) var exclusivityCategories: [String] = []
        @exclusivity(unchecked) var exclusivitySequence: UInt64 = 0
        @exclusivity(unchecked) var exclusivityAttempt: UInt32 = 0
        @exclusivity(unchecked) var gateState: OpStateMachine.GateState?
        @exclusivity(unchecked) var timing = TimeoutState()
        @exclusivity(unchecked) var progress: OpProgress?
        @exclusivity(unchecked) var blockList: BlockOp.BlockList?
        @exclusivity(unchecked) var ignoredFinishes: [UInt64] = []
        #endif
    }
}
