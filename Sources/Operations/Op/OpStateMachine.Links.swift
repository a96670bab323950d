extension OpStateMachine {
    /// The dependencies and dependents of an operation that has some.
    final class Links: @unchecked Sendable {
        // @unchecked Sendable: like the machine that holds it, only touched with the operation's
        // lock held. Unchecked exclusivity on the hot path (the lock serializes every access),
        // checked in the checked build, as for the machine itself (see `Op`).
        //
        // In this order, the object takes 86 bytes and fits a 96-byte heap block (see
        // `PendingOperationSizeTests`): the 4-byte version fills the end of the 28-byte
        // dependency list, before the dependent list's 8-byte alignment.
        #if OPERATIONS_INTERNAL_CHECKS
        var dependencies = DependencyList()
        var dependencyVersion: UInt32 = 0
        var dependents = DependentList()
        var unfinishedDependencyCount: Int32 = 0
        var hasNewerDependency = false
        var weakensEveryDependency = false
        #else
        @exclusivity(unchecked) var dependencies = DependencyList()
        @exclusivity(unchecked) var dependencyVersion: UInt32 = 0
        @exclusivity(unchecked) var dependents = DependentList()
        @exclusivity(unchecked) var unfinishedDependencyCount: Int32 = 0
        @exclusivity(unchecked) var hasNewerDependency = false
        @exclusivity(unchecked) var weakensEveryDependency = false
        #endif
    }
}
