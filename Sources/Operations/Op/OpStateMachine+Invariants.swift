#if OPERATIONS_INTERNAL_CHECKS
extension OpStateMachine {
    /// Traps if the state breaks one of the machine's invariants. Compiled only with
    /// `-D OPERATIONS_INTERNAL_CHECKS`; the storage calls it after every transition.
    func checkInvariants() {
        links?.dependencies.checkInvariants()
        // The count may exceed the listed dependencies for a moment: a dependency that finished and
        // was removed before it told this operation still counts until it does.
        precondition(unfinishedDependencyCount >= 0,
                     "Internal inconsistency: \(unfinishedDependencyCount) unfinished dependencies")
        if isScheduled {
            precondition(lifecycle == .pending && queue != nil, "Internal inconsistency: scheduled in \(lifecycle) without a queue")
        }
        checkGateInvariants()
        switch lifecycle {
        case .pending, .executing:
            break
        case .finishing:
            precondition(dependents.isEmpty, "Internal inconsistency: finishing with dependents")
        case .finished:
            precondition(dependents.isEmpty && queue == nil && waiters.isEmpty,
                         "Internal inconsistency: finished with dependents, a queue or waiters")
        }
        if error != nil {
            precondition(isCancelled || hasExecuted, "Internal inconsistency: an error on an operation that neither ran nor was cancelled")
        }
    }
}
#endif
