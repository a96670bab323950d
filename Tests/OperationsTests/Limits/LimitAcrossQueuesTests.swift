import Testing
import Dispatch
@testable import Operations

@Suite struct LimitAcrossQueuesTests {
    @Test func atMostPermitsOperationsOfACategoryRunAtOnceAcrossQueues() async {
        let limit = OpCondition.limited(uniqueToken("limited"), permits: 3)
        let meter = ConcurrencyMeter()
        let queues = (0..<4).map { _ in OpQueue() }
        for queue in queues {
            await queue.addOperations((0..<15).map { _ in
                conditioned(limit) {
                    meter.enter()
                    blockThread(milliseconds: 2)
                    meter.leave()
                }
            }, waitUntilFinished: false)
        }
        #expect(await drain(queues))
        #expect(meter.total == 60)
        #expect(meter.peak <= 3)
        #expect(meter.peak >= 2, "the limit let only \(meter.peak) run at once")
    }

    @Test func permitsGoToWaitersFirstComeFirstServed() async {
        let category = uniqueToken("fifo")
        let limit = OpCondition.limited(category, permits: 2)
        let first = LimitHolder(limit)
        let second = LimitHolder(limit)
        let queues = [OpQueue(), OpQueue(), OpQueue()]
        #expect(await first.run(on: queues[0]))
        #expect(await second.run(on: queues[1]))
        let waiters = (0..<6).map { LimitHolder(limit, name: "w\($0)") }
        for (index, waiter) in waiters.enumerated() {
            queues[index % 3].addOperation(waiter.op)
            #expect(await eventuallyAsync { Exclusivity.waitingForPermit(in: category).count == index + 1 })
        }
        #expect(Exclusivity.waitingForPermit(in: category).map(ObjectIdentifier.init) == waiters.map { ObjectIdentifier($0.op) })
        first.release.open()
        #expect(await waiters[0].started.waitOffThread())
        second.release.open()
        #expect(await waiters[1].started.waitOffThread())
        for index in 0..<waiters.count - 2 {
            #expect(Exclusivity.waitingForPermit(in: category).map(ObjectIdentifier.init) == waiters[(index + 2)...].map { ObjectIdentifier($0.op) })
            #expect(!waiters[index + 2].op.isExecuting)
            waiters[index].release.open()
            #expect(await waiters[index + 2].started.waitOffThread())
        }
        waiters[waiters.count - 2].release.open()
        waiters[waiters.count - 1].release.open()
        #expect(await drain(queues))
        #expect(Exclusivity.permitsInUse(of: category) == 0)
        #expect(!Exclusivity.keepsCountedCategory(category), "an unused category is forgotten")
    }

    @Test func mutuallyExclusiveAndLimitedToOnePermitExcludeEachOther() async {
        let category = uniqueToken("one")
        let exclusive = LimitHolder(.mutuallyExclusive(category))
        let queue = OpQueue()
        #expect(await exclusive.run(on: queue))
        let limited = LimitHolder(.limited(category, permits: 1))
        OpQueue().addOperation(limited.op)
        #expect(await eventuallyAsync { waitsForItsCategory(limited.op) })
        #expect(!limited.op.isExecuting)
        exclusive.release.open()
        #expect(await limited.started.waitOffThread())
        // And the other way round.
        let second = LimitHolder(.mutuallyExclusive(category))
        queue.addOperation(second.op)
        #expect(await eventuallyAsync { waitsForItsCategory(second.op) })
        #expect(!second.op.isExecuting)
        limited.release.open()
        #expect(await second.started.waitOffThread())
        second.release.open()
        #expect(await eventuallyAsync { second.op.isFinished })
    }

    @Test func waitingForAPermitHoldsNoSlotOfItsQueue() async {
        let limit = OpCondition.limited(uniqueToken("slots"), permits: 2)
        let holders = [LimitHolder(limit), LimitHolder(limit)]
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 3
        for holder in holders { #expect(await holder.run(on: queue)) }
        let waiters = (0..<10).map { _ in conditioned(limit) }
        await queue.addOperations(waiters, waitUntilFinished: false)
        // The third slot is free: a plain operation runs while ten wait for a permit.
        let plain = BlockOp {}
        queue.addOperation(plain)
        #expect(await eventuallyAsync { plain.isFinished })
        #expect(waiters.allSatisfy { !$0.isFinished })
        for holder in holders { holder.release.open() }
        #expect(await drain([queue]))
    }

    @Test func anOperationStartedByHandWaitsForAPermitAndTakesIt() async {
        let category = uniqueToken("manual")
        let limit = OpCondition.limited(category, permits: 2)
        let holders = [LimitHolder(limit), LimitHolder(limit)]
        let queue = OpQueue()
        for holder in holders { #expect(await holder.run(on: queue)) }
        let meter = ConcurrencyMeter()
        let manual = conditioned(limit) { meter.enter(); meter.leave() }
        async let started: Void = onOwnThread { manual.start() }
        #expect(await eventuallyAsync { Exclusivity.waitingForPermit(in: category).count == 1 })
        #expect(meter.total == 0)
        holders[0].release.open()
        await started
        #expect(meter.total == 1 && manual.isFinished)
        holders[1].release.open()
        #expect(await drain([queue]))
        #expect(Exclusivity.permitsInUse(of: category) == 0)
    }

    @Test func anOperationWhoseOnlyConditionIsALimitHoldsItsPermitWithoutTheTable() async {
        let category = uniqueToken("lock-free")
        let limit = OpCondition.limited(category, permits: 2)
        let queues = [OpQueue(), OpQueue()]
        let alone = LimitHolder(limit)
        #expect(await alone.run(on: queues[0]))
        #expect(Exclusivity.permitsInUse(of: category) == 1)
        #expect(!Exclusivity.hasCountedRequest(alone.op), "taken without the table: no record")
        // With an exclusive category too, it goes through the table, and counts in the same word.
        let both = LimitHolder(.all([limit, .mutuallyExclusive(uniqueToken("lock-free-x"))]))
        #expect(await both.run(on: queues[1]))
        #expect(Exclusivity.permitsInUse(of: category) == 2)
        #expect(Exclusivity.hasCountedRequest(both.op))
        // Full: the next one waits in the table, and takes the permit the lock-free holder gives
        // back (it leaves no record once granted).
        let next = LimitHolder(limit)
        queues[0].addOperation(next.op)
        #expect(await eventuallyAsync { Exclusivity.waitingForPermit(in: category).map(ObjectIdentifier.init) == [ObjectIdentifier(next.op)] })
        alone.release.open()
        #expect(await next.started.waitOffThread())
        #expect(!Exclusivity.hasCountedRequest(next.op), "granted at its turn, it holds its permit as the others do")
        #expect(Exclusivity.permitsInUse(of: category) == 2)
        both.release.open()
        next.release.open()
        #expect(await drain(queues))
        #expect(Exclusivity.permitsInUse(of: category) == 0)
        #expect(!Exclusivity.keepsCountedCategory(category))
    }

    @Test func anOperationWithAnExclusiveAndACountedCategoryHoldsBoth() async {
        let exclusiveCategory = uniqueToken("both-x")
        let countedCategory = uniqueToken("both-n")
        let counted = OpCondition.limited(countedCategory, permits: 2)
        let meter = ConcurrencyMeter()
        let queues = [OpQueue(), OpQueue()]
        for (index, queue) in queues.enumerated() {
            await queue.addOperations((0..<10).map { item in
                let op = BlockOp {
                    meter.enter()
                    blockThread(milliseconds: 1)
                    meter.leave()
                }
                op.addCondition(.all([.mutuallyExclusive(exclusiveCategory), counted]))
                op.name = "\(index)-\(item)"
                return op
            }, waitUntilFinished: false)
        }
        #expect(await drain(queues))
        #expect(meter.total == 20)
        #expect(meter.peak == 1, "the exclusive category lets one run at a time")
        #expect(Exclusivity.permitsInUse(of: countedCategory) == 0)
        #expect(Exclusivity.holders(of: exclusiveCategory).isEmpty)
    }
}
