import Testing
@testable import Operations

/// The timeout's events on the pure operation state machine: which timer may time the operation
/// out is decided by the machine, without threads or locks.
@Suite struct TimeoutStateMachineTests {
    private static let error = OpTimeoutError(timeout: .seconds(1), operation: "op")

    /// The generation of an arming, or `nil` for none or a disarming.
    private static func armedGeneration(_ arming: OpStateMachine.TimeoutArming?) -> UInt64? {
        if case .arm(_, _, let generation, _, _)? = arming { return generation }
        return nil
    }

    @Test func aTimeoutSetBeforeTheStartIsArmedWhenTheOperationStarts() {
        var machine = OpStateMachine()
        let set = machine.setTimeout(.seconds(1))
        check(set.attach != nil && set.arming == nil)
        check(machine.armTimeoutAtStart() == nil)   // not executing yet
        _ = machine.startManually()
        let generation = Self.armedGeneration(machine.armTimeoutAtStart())
        check(generation != nil)
        check(machine.armTimeoutAtStart() == nil)   // armed once: a late `didAttach` does not re-arm
        check(machine.timeoutPassed(generation: generation!, error: Self.error))
    }

    @Test func onlyTheTimerArmedLastTimesTheOperationOut() {
        var machine = OpStateMachine()
        _ = machine.startManually()
        let first = machine.setTimeout(.seconds(5))
        check(first.attach != nil)
        let firstGeneration = Self.armedGeneration(first.arming)!
        let cleared = machine.setTimeout(nil)
        check(cleared.attach == nil)
        guard case .disarm? = cleared.arming else {
            Issue.record("clearing while running disarms")
            return
        }
        let again = machine.setTimeout(.seconds(1))
        check(again.attach == nil)   // one tracker for good
        let lastGeneration = Self.armedGeneration(again.arming)!
        check(lastGeneration > firstGeneration)
        check(!machine.timeoutPassed(generation: firstGeneration, error: Self.error))
        check(machine.timeoutPassed(generation: lastGeneration, error: Self.error))
    }

    @Test func aTimeoutSetWhileRunningIsNotArmedAgainByTheStart() {
        var machine = OpStateMachine()
        _ = machine.startManually()
        check(Self.armedGeneration(machine.setTimeout(.seconds(1)).arming) != nil)
        check(machine.armTimeoutAtStart() == nil)
        var changed = OpStateMachine()
        _ = changed.setTimeout(.seconds(1))
        _ = changed.startManually()
        _ = changed.setTimeout(.seconds(2))   // changed before `willExecute` was heard: counts from then
        check(changed.armTimeoutAtStart() == nil)
    }

    @Test func noTimerTouchesAnOperationWhoseWorkIsOver() {
        var machine = OpStateMachine()
        _ = machine.startManually()
        let generation = Self.armedGeneration(machine.setTimeout(.seconds(1)).arming)!
        machine.endTimeout()
        check(!machine.timeoutPassed(generation: generation, error: Self.error))
        check(machine.setTimeout(.zero).arming == nil)   // nothing left to limit
        check(!machine.isCancelled && machine.error == nil)
    }

    @Test func noTimerTouchesACancelledOrFinishedOperation() {
        var cancelled = OpStateMachine()
        _ = cancelled.startManually()
        let generation = Self.armedGeneration(cancelled.setTimeout(.seconds(1)).arming)!
        _ = cancelled.cancel()
        check(!cancelled.timeoutPassed(generation: generation, error: Self.error))
        check(cancelled.error == nil)

        var finished = OpStateMachine()
        _ = finished.startManually()
        let finishedGeneration = Self.armedGeneration(finished.setTimeout(.seconds(1)).arming)!
        _ = finished.finish()
        check(!finished.timeoutPassed(generation: finishedGeneration, error: Self.error))
    }

    @Test func aTimeoutThatPassedGivesItsErrorWithTheCancellation() {
        var machine = OpStateMachine()
        _ = machine.startManually()
        let generation = Self.armedGeneration(machine.setTimeout(.seconds(1)).arming)!
        check(machine.timeoutPassed(generation: generation, error: Self.error))
        check(machine.error == nil)   // not before the operation reads as cancelled
        _ = machine.cancel()
        check(machine.isCancelled)
        check(machine.error as? OpTimeoutError == Self.error)
    }

    @Test func clearingATimeoutThatWasNeverSetAllocatesNothing() {
        var machine = OpStateMachine()
        check(machine.setTimeout(nil).attach == nil)
        check(machine.extras == nil)
    }
}
