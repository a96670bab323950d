import Dispatch

// What the machine keeps besides its life: settings, the completion block, waiters, observers,
// and the observable facts it derives.

extension OpStateMachine {

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
    var conditions: [OpCondition] { extras.map { $0.conditions.array } ?? [] }

    /// The conditions, and whether one of them is `async`.
    var conditionsToEvaluate: (conditions: [OpCondition], isAsynchronous: Bool) {
        guard let extras else { return ([], false) }
        return (extras.conditions.array, extras.hasAsynchronousConditions)
    }

    /// The operation's exclusivity categories.
    var exclusivityCategories: [String] { extras?.exclusivityCategories ?? [] }
    /// The counted categories (limits and rate limits) the operation takes as it starts.
    var limits: [OpLimit] { extras?.limits ?? [] }


    /// The progress, if it was asked for.
    var existingProgress: OpProgress? { extras?.progress }

    mutating func keepProgress(_ progress: OpProgress) {
        ensureExtras().progress = progress
    }

    /// The observable flags, packed as in ``Op/Flags``.
    @inline(__always)
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

    /// Makes the operation run its body even when cancelled before it started (for groups).
    mutating func runEvenWhenCancelled() {
        runsWhenCancelled = true
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
