import Testing
import Dispatch
@testable import Operations

/// Cancellation at every point where a limited or rate-limited operation waits, and the permits
/// of operations that end in any way.
@Suite struct LimitCancellationTests {
    @Test func anOperationCancelledWhileItWaitsForAPermitLeavesAtOnceAndTakesNothing() async {
        let category = uniqueToken("cancel-permit")
        let limit = OpCondition.limited(category, permits: 2)
        let holders = [LimitHolder(limit), LimitHolder(limit)]
        let queue = OpQueue()
        for holder in holders { #expect(await holder.run(on: queue)) }
        let ran = ConcurrencyMeter()
        let waiter = conditioned(limit) { ran.enter(); ran.leave() }
        let behind = conditioned(limit)
        queue.addOperation(waiter)
        queue.addOperation(behind)
        #expect(await eventuallyAsync { Exclusivity.waitingForPermit(in: category).count == 2 })
        waiter.cancel()
        #expect(await eventuallyAsync { waiter.isFinished })
        #expect(ran.total == 0 && waiter.isCancelled)
        #expect(Exclusivity.permitsInUse(of: category) == 2, "the cancelled waiter took nothing")
        #expect(Exclusivity.waitingForPermit(in: category).map(ObjectIdentifier.init) == [ObjectIdentifier(behind)])
        holders[0].release.open()
        #expect(await eventuallyAsync { behind.isFinished })
        holders[1].release.open()
        #expect(await drain([queue]))
        #expect(Exclusivity.permitsInUse(of: category) == 0)
    }

    @Test func aPermitComesBackWhenItsHolderIsCancelledFailsOrIsStartedByHand() async {
        let category = uniqueToken("give-back")
        let limit = OpCondition.limited(category, permits: 2)
        let queue = OpQueue()
        // Cancelled while it runs.
        let cancelled = LimitHolder(limit)
        #expect(await cancelled.run(on: queue))
        cancelled.op.cancel()
        cancelled.release.open()
        // Failing.
        struct Failure: Error {}
        let failing = AsyncBlockOp<Void> { throw Failure() }
        failing.addCondition(limit)
        queue.addOperation(failing)
        // Cancelled before it starts: it never takes a permit.
        let cancelledEarly = conditioned(limit)
        cancelledEarly.cancel()
        queue.addOperation(cancelledEarly)
        #expect(await drain([queue]))
        #expect(failing.error is Failure)
        #expect(Exclusivity.permitsInUse(of: category) == 0)
        // Started by hand.
        let manual = conditioned(limit)
        await onOwnThread { manual.start() }
        #expect(manual.isFinished)
        #expect(Exclusivity.permitsInUse(of: category) == 0)
        #expect(!Exclusivity.keepsCountedCategory(category))
    }

    @Test func anOperationStartedByHandThatIsCancelledWhileItWaitsReturnsAtOnce() async {
        let category = uniqueToken("cancel-manual")
        let limit = OpCondition.limited(category, permits: 2)
        let holders = [LimitHolder(limit), LimitHolder(limit)]
        let queue = OpQueue()
        for holder in holders { #expect(await holder.run(on: queue)) }
        let ran = ConcurrencyMeter()
        let manual = conditioned(limit) { ran.enter(); ran.leave() }
        async let started: Void = onOwnThread { manual.start() }
        #expect(await eventuallyAsync { Exclusivity.waitingForPermit(in: category).count == 1 })
        manual.cancel()
        await started
        #expect(manual.isFinished && ran.total == 0)
        #expect(Exclusivity.permitsInUse(of: category) == 2)
        for holder in holders { holder.release.open() }
        #expect(await drain([queue]))
        #expect(Exclusivity.permitsInUse(of: category) == 0)
    }

    @Test func anOperationCancelledWhileItWaitsForARateTokenLeavesAtOnce() async {
        let category = uniqueToken("cancel-token")
        let clock = ManualClock()
        let limit = OpCondition.rateLimited(category, permits: 1, per: .seconds(10), clock: clock)
        let queue = OpQueue()
        let first = conditioned(limit)
        queue.addOperation(first)
        #expect(await eventuallyAsync { first.isFinished })
        let ran = ConcurrencyMeter()
        let waiter = conditioned(limit) { ran.enter(); ran.leave() }
        let behind = conditioned(limit)
        queue.addOperation(waiter)
        queue.addOperation(behind)
        #expect(await eventuallyAsync { Exclusivity.waitingForPermit(in: category).count == 2 })
        waiter.cancel()
        #expect(await eventuallyAsync { waiter.isFinished })
        #expect(ran.total == 0)
        #expect(Exclusivity.permitsInUse(of: category) == 1, "only the first start's token is out")
        #expect(await eventuallyAsync { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(10))
        #expect(await eventuallyAsync { behind.isFinished })
        #expect(!behind.isCancelled)
        #expect(await eventuallyAsync { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(10))
        #expect(await eventuallyAsync { Exclusivity.permitsInUse(of: category) == 0 })
    }

    @Test func anOperationWhoseQueueIsSuspendedWhileItWaitsKeepsNobodyWaiting() async {
        let category = uniqueToken("suspend")
        let limit = OpCondition.limited(category, permits: 2)
        let holders = [LimitHolder(limit), LimitHolder(limit)]
        let holding = OpQueue()
        for holder in holders { #expect(await holder.run(on: holding)) }
        let suspended = OpQueue()
        let parked = conditioned(limit)
        suspended.addOperation(parked)
        #expect(await eventuallyAsync { Exclusivity.waitingForPermit(in: category).count == 1 })
        suspended.isSuspended = true
        #expect(Exclusivity.waitingForPermit(in: category).isEmpty)
        let other = OpQueue()
        let later = conditioned(limit)
        other.addOperation(later)
        #expect(await eventuallyAsync { Exclusivity.waitingForPermit(in: category).count == 1 })
        holders[0].release.open()
        #expect(await eventuallyAsync { later.isFinished })
        #expect(!parked.isFinished)
        suspended.isSuspended = false
        #expect(await eventuallyAsync { parked.isFinished })
        holders[1].release.open()
        #expect(await drain([holding, suspended, other]))
        #expect(Exclusivity.permitsInUse(of: category) == 0)
    }
}
