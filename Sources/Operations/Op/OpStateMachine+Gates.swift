// Readiness and the gates between "every dependency finished" and "on the ready list":
// conditions, then exclusivity (see `OpStateMachine.Gate`).

extension OpStateMachine {

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
    mutating func scheduleIfReady() -> ReadinessAction {
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
    mutating func beginPassingGates() -> GateStep {
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
}
