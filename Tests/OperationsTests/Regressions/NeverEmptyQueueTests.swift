import Testing
@testable import Operations

/// Issue 22, defect 3: a queue that is never empty (a server's queue) must keep memory in
/// proportion to what it holds now, at any age, and number its members by what it holds, so that
/// no counter runs out in a long-lived process. Driven on the scheduler alone, without threads;
/// the soak (`NeverEmptyQueueSoakTests`) does the same through a real queue.
///
/// The bodies run on a thread of their own (``onOwnThread(_:)``): they keep a thread busy for a
/// while (seconds under ThreadSanitizer), which must not be one of Swift's few cooperative threads.
@Suite struct NeverEmptyQueueTests {
    /// Operations added one at a time and removed oldest first, `held` of them in the queue at
    /// every moment; returns the largest slot number handed out and the largest footprint seen.
    private func churn(held: Int, through total: Int, removeNewestEvery: Int? = nil,
                       _ machine: inout OpQueueStateMachine) -> (maxSlot: Int, footprint: OpQueueStateMachine.Footprint) {
        var members: [Op] = []
        var first = 0
        var maxSlot = 0
        var largest = machine.footprint
        for _ in 0..<held {
            let operation = BlockOp {}
            machine.addMember(operation)
            members.append(operation)
        }
        for step in 0..<total {
            let operation = BlockOp {}
            machine.addMember(operation)
            members.append(operation)
            maxSlot = max(maxSlot, operation.membership.slot)
            if let every = removeNewestEvery, step.isMultiple(of: every) {
                // Now and then the newest leaves first (a hole at the end), then a fresh one joins.
                _ = machine.removeMember(members.removeLast())
                let replacement = BlockOp {}
                machine.addMember(replacement)
                members.append(replacement)
            }
            _ = machine.removeMember(members[first])
            first += 1
            if first > 1_024 {
                members.removeFirst(first)
                first = 0
            }
            largest = largest.max(machine.footprint)
        }
        #expect(machine.operationCount == held)
        #expect(machine.members.elements.map(ObjectIdentifier.init) == members[first...].map(ObjectIdentifier.init))
        return (maxSlot, largest)
    }

    @Test(arguments: [1, 10, 100])
    func aNeverEmptyQueueNumbersItsMembersByWhatItHoldsNotByWhatItEverHeld(held: Int) async {
        await onOwnThread {
            var machine = OpQueueStateMachine()
            let (maxSlot, footprint) = churn(held: held, through: 100_000, &machine)
            let bound = 2 * max(held + 1, NarrowedCounters.memberListSlack) + 1
            #expect(maxSlot < bound, "slot \(maxSlot) after 100,000 operations through a queue of \(held)")
            #expect(footprint.memberSlots <= bound, "\(footprint)")
            #expect(footprint.memberCapacity <= 2 * bound + 16, "\(footprint)")
        }
    }

    @Test func aNeverEmptyQueueWhoseNewestMembersLeaveFirstStaysSmallToo() async {
        await onOwnThread {
            var machine = OpQueueStateMachine()
            let (maxSlot, footprint) = churn(held: 20, through: 50_000, removeNewestEvery: 3, &machine)
            let bound = 2 * max(21, NarrowedCounters.memberListSlack) + 1
            #expect(maxSlot < bound && footprint.memberSlots <= bound, "slot \(maxSlot), \(footprint)")
        }
    }

    @Test func aQueueThatShrinksGivesItsMemoryBack() async {
        await onOwnThread {
            var machine = OpQueueStateMachine()
            _ = machine.setSuspended(true)
            var members: [Op] = []
            for _ in 0..<10_000 {
                let operation = BlockOp {}
                machine.addMember(operation)
                _ = machine.push(ReadyLists.Entry(operation: operation, ticket: 0), priority: .normal, callerWillPoll: false)
                members.append(operation)
            }
            let full = machine.footprint
            #expect(full.memberSlots == 10_000 && full.readyEntries == 10_000)
            // The queue runs all but five (oldest first) and keeps those five for good.
            _ = machine.setSuspended(false)
            if machine.pendingDrainers > 0 { machine.drainerStarted() }
            for index in 0..<(members.count - 5) {
                guard case .run(let entry, _) = machine.next(releasingSlot: index > 0) else {
                    Issue.record("expected operation \(index) to start")
                    return
                }
                #expect(entry.operation === members[index])
                _ = machine.removeMember(entry.operation)
            }
            _ = machine.setSuspended(true)
            let small = machine.footprint
            #expect(small.memberSlots <= 2 * NarrowedCounters.memberListSlack + 11, "\(small)")
            #expect(small.memberCapacity <= 4 * NarrowedCounters.memberListSlack + 32, "\(small)")
            #expect(small.readyCapacity <= 64, "\(small)")
        }
    }

    @Test func aNeverEmptyQueueWithBarriersKeepsItsEpochsSmall() async {
        await onOwnThread {
            var machine = OpQueueStateMachine()
            var members: [Op] = []
            var first = 0
            var largest = machine.footprint
            for step in 0..<20_000 {
                let operation = BlockOp {}
                operation.membership.isBarrier = step.isMultiple(of: 3)
                machine.addMember(operation)
                members.append(operation)
                if members.count - first > 6 {
                    _ = machine.removeMember(members[first])
                    first += 1
                }
                largest = largest.max(machine.footprint)
            }
            #expect(largest.epochCapacity <= 2 * NarrowedCounters.epochCountsSlack + 16, "\(largest)")
            #expect(largest.memberSlots <= 2 * max(7, NarrowedCounters.memberListSlack) + 1, "\(largest)")
        }
    }
}
