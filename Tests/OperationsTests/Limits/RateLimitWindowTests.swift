import Testing
import Dispatch
@testable import Operations

/// Rate limits, measured on a clock advanced by hand: no real waiting, no timing assertion on
/// the wall clock.
@Suite struct RateLimitWindowTests {
    @Test func aBurstOfPermitsStartsThenOneMoreEachTimeAPermitComesBack() async {
        let category = uniqueToken("window")
        let clock = ManualClock()
        let limit = OpCondition.rateLimited(category, permits: 2, per: .seconds(10), clock: clock)
        let started = EventLog<Duration>()
        let queues = [OpQueue(), OpQueue()]
        let ops = (0..<5).map { _ in conditioned(limit) { started.append(clock.now.offset) } }
        for (index, op) in ops.enumerated() { queues[index % 2].addOperation(op) }
        #expect(await eventuallyAsync { started.count == 2 && Exclusivity.waitingForPermit(in: category).count == 3 })
        #expect(await eventuallyAsync { clock.sleeperCount == 2 })
        #expect(clock.deadlines == [.seconds(10), .seconds(10)])
        clock.advance(by: .seconds(9))
        #expect(started.count == 2)
        clock.advance(by: .seconds(1))
        #expect(await eventuallyAsync { started.count == 4 })
        #expect(await eventuallyAsync { clock.sleeperCount == 2 })
        #expect(clock.deadlines == [.seconds(20), .seconds(20)])
        clock.advance(by: .seconds(10))
        #expect(await eventuallyAsync { started.count == 5 })
        #expect(started.all == [.zero, .zero, .seconds(10), .seconds(10), .seconds(20)])
        #expect(await eventuallyAsync { clock.sleeperCount == 1 })
        #expect(clock.deadlines == [.seconds(30)])
        clock.advance(by: .seconds(10))
        #expect(await eventuallyAsync { Exclusivity.permitsInUse(of: category) == 0 })
        #expect(!Exclusivity.keepsCountedCategory(category))
    }

    @Test func aTokenReservedForAnOperationWaitingForASlotCountsFromItsStart() async {
        let category = uniqueToken("slot")
        let clock = ManualClock()
        let limit = OpCondition.rateLimited(category, permits: 1, per: .seconds(10), clock: clock)
        let started = EventLog<(String, Duration)>()
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let first = conditioned(limit) { started.append(("first", clock.now.offset)) }
        queue.addOperation(first)
        #expect(await eventuallyAsync { first.isFinished })
        let second = conditioned(limit) { started.append(("second", clock.now.offset)) }
        queue.addOperation(second)
        #expect(await eventuallyAsync { Exclusivity.waitingForPermit(in: category).count == 1 })
        // A plain operation takes the queue's only slot, and keeps it while the token comes back.
        let occupier = LimitHolder(.predicate("always") { _ in true })
        #expect(await occupier.run(on: queue))
        #expect(await eventuallyAsync { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(10))
        #expect(await eventuallyAsync { Exclusivity.waitingForPermit(in: category).isEmpty })
        clock.advance(by: .seconds(5))
        #expect(started.count == 1, "the second waits for the slot")
        let third = conditioned(limit) { started.append(("third", clock.now.offset)) }
        OpQueue().addOperation(third)
        #expect(await eventuallyAsync { Exclusivity.waitingForPermit(in: category).count == 1 },
                "the token reserved for the second is not free for another queue")
        occupier.release.open()
        #expect(await eventuallyAsync { second.isFinished })
        // Its interval counts from its start at 15 s, not from its turn at 10 s.
        #expect(await eventuallyAsync { clock.sleeperCount == 1 })
        #expect(clock.deadlines == [.seconds(25)])
        clock.advance(by: .seconds(9))
        #expect(!third.isExecuting && !third.isFinished)
        clock.advance(by: .seconds(1))
        #expect(await eventuallyAsync { third.isFinished })
        #expect(started.all.map(\.0) == ["first", "second", "third"])
        #expect(started.all.map(\.1) == [.zero, .seconds(15), .seconds(25)])
        #expect(await eventuallyAsync { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(10))
        #expect(await eventuallyAsync { Exclusivity.permitsInUse(of: category) == 0 })
    }

    @Test func aRateLimitedOperationThatRunsLongerThanItsIntervalStillGivesItsPermitBackOnTime() async {
        let category = uniqueToken("long")
        let clock = ManualClock()
        let limit = OpCondition.rateLimited(category, permits: 1, per: .seconds(1), clock: clock)
        let long = LimitHolder(limit)
        let queue = OpQueue()
        #expect(await long.run(on: queue))
        let next = conditioned(limit)
        queue.addOperation(next)
        #expect(await eventuallyAsync { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(1))
        #expect(await eventuallyAsync { next.isFinished }, "a rate limit counts starts, not running operations")
        long.release.open()
        #expect(await eventuallyAsync { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(1))
        #expect(await drain([queue]))
        #expect(await eventuallyAsync { Exclusivity.permitsInUse(of: category) == 0 })
    }

    @Test func anOperationStartedByHandWaitsForARateToken() async {
        let category = uniqueToken("manual-rate")
        let clock = ManualClock()
        let limit = OpCondition.rateLimited(category, permits: 1, per: .seconds(3), clock: clock)
        let first = conditioned(limit)
        await onOwnThread { first.start() }
        let second = conditioned(limit)
        async let started: Void = onOwnThread { second.start() }
        #expect(await eventuallyAsync { Exclusivity.waitingForPermit(in: category).count == 1 })
        #expect(await eventuallyAsync { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(3))
        await started
        #expect(second.isFinished && !second.isCancelled)
        #expect(await eventuallyAsync { clock.sleeperCount == 1 })
        #expect(clock.deadlines == [.seconds(6)])
        clock.advance(by: .seconds(3))
        #expect(await eventuallyAsync { Exclusivity.permitsInUse(of: category) == 0 })
    }
}
