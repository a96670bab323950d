import Testing
@testable import Operations

/// The barrier waits a cycle search takes from a queue in one look.
@Suite(.offTheCooperativePool) struct BarrierWaitsTests {
    /// A queue's members with their epochs as `addMember` gives them: `layout` lists, in order of
    /// addition, `true` for a barrier.
    private func members(_ layout: [Bool]) -> [Op] {
        var epoch = 0
        return layout.map { isBarrier in
            let op = BlockOp {}
            op.membership.epoch = epoch
            op.membership.isBarrier = isBarrier
            if isBarrier { epoch += 1 }
            return op
        }
    }

    @Test func aBarrierWaitsForTheMembersBeforeItAndTheBarrierBeforeThat() {
        // a b | B1 | c | B2 | d
        let ops = members([false, false, true, false, true, false])
        let (a, b, first, c, second, d) = (ops[0], ops[1], ops[2], ops[3], ops[4], ops[5])
        let waits = BarrierWaits(members: ops, completedBarriers: 0)
        #expect(waits.waits(of: first) == [a, b])
        #expect(waits.waits(of: second) == [c, first])
        #expect(waits.waits(of: a).isEmpty && waits.waits(of: b).isEmpty)
        #expect(waits.waits(of: c) == [first])
        #expect(waits.waits(of: d) == [second])
    }

    @Test func membersAfterBarriersThatLeftWaitForNothing() {
        // B0 left: the rest is epoch 1 on.
        let ops = members([true, false, true, false])
        let remaining = Array(ops.dropFirst())
        let waits = BarrierWaits(members: remaining, completedBarriers: 1)
        #expect(waits.waits(of: remaining[0]).isEmpty)
        #expect(waits.waits(of: remaining[1]) == [remaining[0]])
        #expect(waits.waits(of: remaining[2]) == [remaining[1]])
    }

    @Test func anOperationOutsideTheQueueWaitsForNothing() {
        let waits = BarrierWaits(members: members([false, true]), completedBarriers: 0)
        #expect(waits.waits(of: BlockOp {}).isEmpty)
        #expect(BarrierWaits().waits(of: BlockOp {}).isEmpty)
    }

    @Test func aQueueTakesItsBarrierWaitsFromItsMembers() {
        let queue = OpQueue()
        queue.isSuspended = true
        let before = BlockOp {}
        let after = BlockOp {}
        queue.addOperation(before)
        queue.addBarrierBlock {}
        queue.addOperation(after)
        let barrier = queue.operations[1]
        let waits = queue.barrierWaits()
        #expect(waits.waits(of: barrier) == [before])
        #expect(waits.waits(of: after) == [barrier])
        queue.isSuspended = false
        #expect(queueEmpties(queue))
    }

    @Test func manyBarriersLeaveInOrder() {
        let queue = OpQueue()
        queue.isSuspended = true
        let log = EventLog<Int>()
        for index in 0..<2_000 {
            queue.addBarrierBlock { log.append(index) }
        }
        queue.isSuspended = false
        #expect(queueEmpties(queue))
        #expect(log.all == Array(0..<2_000))
    }
}
