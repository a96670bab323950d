import Testing
@testable import Operations

/// Issue 22, defect 10: the ticket that tells an operation's live ready-list entry from its stale
/// ones is narrow and wraps; wrapping must never make a stale entry pass for the live one, however
/// often the priority of a waiting operation changes. In the checked build the ticket is a few
/// bits wide, so these tests wrap it many times over.
///
/// The bodies run on a thread of their own (``onOwnThread(_:)``): they keep a thread busy for a
/// while (seconds under ThreadSanitizer), which must not be one of Swift's few cooperative threads.
@Suite struct TicketWrapTests {
    /// How many distinct tickets there are.
    private static let range = Int(Op.ticketMask) + 1

    private static func advance(_ ticket: Op.Ticket) -> Op.Ticket {
        Op.nextTicket(after: ticket)
    }

    // MARK: Through a queue

    @Test(arguments: [1, 2, 3])
    func equalPrioritiesStartInOrderAfterAWaitingOperationsTicketWrapsAround(laps: Int) async {
        await onOwnThread {
            let queue = OpQueue()
            queue.maxConcurrentOperationCount = 1
            queue.isSuspended = true
            let log = EventLog<String>()
            let a = BlockOp { log.append("a") }
            let x = BlockOp { log.append("x") }
            let b = BlockOp { log.append("b") }
            queue.addOperations([a, x, b], waitUntilFinished: false)
            // A whole number of laps brings x's ticket back to the one of its first entry, which sits
            // between a and b; an even number of changes leaves it at .normal, moved behind b.
            for change in 0..<(laps * Self.range) {
                x.queuePriority = change.isMultiple(of: 2) ? .high : .normal
            }
            queue.isSuspended = false
            queue.waitUntilAllOperationsAreFinished()
            #expect(log.all == ["a", "b", "x"])
        }
    }

    @Test func equalPrioritiesStartInOrderAfterAHeldOperationsTicketWrapsAround() async {
        await onOwnThread {
            let queue = OpQueue()
            queue.maxConcurrentOperationCount = 1
            queue.isSuspended = true
            let log = EventLog<String>()
            let a = BlockOp { log.append("a") }
            queue.addOperation(a)
            queue.addBarrierBlock { log.append("barrier") }
            // Behind the barrier: their entries wait in the held list until the barrier leaves.
            let x = BlockOp { log.append("x") }
            let b = BlockOp { log.append("b") }
            queue.addOperations([x, b], waitUntilFinished: false)
            for change in 0..<(2 * Self.range) {
                x.queuePriority = change.isMultiple(of: 2) ? .high : .normal
            }
            queue.isSuspended = false
            queue.waitUntilAllOperationsAreFinished()
            #expect(log.all == ["a", "barrier", "b", "x"])
        }
    }

    @Test func aHundredPriorityChangesOfOneWaitingOperationKeepEveryLevelFirstInFirstOut() async {
        await onOwnThread {
            let queue = OpQueue()
            queue.maxConcurrentOperationCount = 1
            queue.isSuspended = true
            let log = EventLog<Int>()
            let levels = Op.QueuePriority.allCases
            let operations = (0..<10).map { index in BlockOp { log.append(index) } }
            queue.addOperations(operations, waitUntilFinished: false)
            // Operation 3 wanders through every level and ends at .normal, last of the normals.
            for change in 0..<100 {
                operations[3].queuePriority = levels[change % levels.count]
            }
            operations[3].queuePriority = .veryHigh
            operations[3].queuePriority = .normal
            queue.isSuspended = false
            queue.waitUntilAllOperationsAreFinished()
            #expect(log.all == [0, 1, 2, 4, 5, 6, 7, 8, 9, 3])
        }
    }

    @Test func changingThePriorityOfOneOperationKeepsTheReadyListsSmall() async {
        await onOwnThread {
            let queue = OpQueue()
            queue.maxConcurrentOperationCount = 1
            queue.isSuspended = true
            let operations = (0..<8).map { _ in BlockOp {} }
            queue.addOperations(operations, waitUntilFinished: false)
            for change in 0..<(4 * Self.range + 1_000) {
                operations[change % 8].queuePriority = change.isMultiple(of: 3) ? .high : .low
            }
            // Stale entries are dropped as they pile up, not only when the queue runs.
            let footprint = queue.withLock { queue.machine.footprint }
            #expect(footprint.readyEntries <= 2 * operations.count + 2, "\(footprint)")
            #expect(footprint.readyCapacity <= 16 * operations.count, "\(footprint)")
            queue.isSuspended = false
            queue.waitUntilAllOperationsAreFinished()
        }
    }

    // MARK: The scheduler alone

    private func popAll(_ machine: inout OpQueueStateMachine) -> [(Op, Op.Ticket)] {
        var popped: [(Op, Op.Ticket)] = []
        while case .run(let entry, _) = machine.next(releasingSlot: !popped.isEmpty) {
            popped.append((entry.operation, entry.ticket))
        }
        return popped
    }

    @Test func onlyTheNewestEntryOfAnOperationIsLiveAfterItsTicketWrappedManyTimes() async {
        await onOwnThread {
            for others in [1, 3, Self.range + 1] {
                var machine = OpQueueStateMachine()
                _ = machine.setMaxConcurrentOperationCount(1)
                _ = machine.setSuspended(true)
                let x = BlockOp {}
                let rest = (0..<others).map { _ in BlockOp {} }
                machine.addMember(x)
                var ticket: Op.Ticket = 0
                _ = machine.push(ReadyLists.Entry(operation: x, ticket: ticket), priority: .normal, callerWillPoll: false)
                for operation in rest {
                    machine.addMember(operation)
                    _ = machine.push(ReadyLists.Entry(operation: operation, ticket: 0), priority: .normal, callerWillPoll: false)
                }
                for _ in 0..<(3 * Self.range) {
                    ticket = Self.advance(ticket)
                    _ = machine.push(ReadyLists.Entry(operation: x, ticket: ticket), priority: .normal, callerWillPoll: false)
                }
                _ = machine.setSuspended(false)
                if machine.pendingDrainers > 0 { machine.drainerStarted() }
                let popped = popAll(&machine)
                #expect(popped.count == others + 1, "others: \(others)")
                #expect(popped.last?.0 === x && popped.last?.1 == ticket, "others: \(others)")
                #expect(popped.dropLast().allSatisfy { $0.0 !== x }, "others: \(others)")
            }
        }
    }

    /// Every ticket when the range is small (the checked build), otherwise those around the
    /// wrap and the half-range boundary.
    private static var sampleTickets: [Op.Ticket] {
        if range <= 256 { return (0..<range).map { Op.Ticket($0) } }
        let half = range / 2
        return [0, 1, 2, half - 2, half - 1, half, half + 1, range - 2, range - 1].map { Op.Ticket($0) }
    }

    /// Every distance when the range is small, otherwise those around the half range and the ends.
    private static var sampleDistances: [Int] {
        if range <= 256 { return Array(1..<range) }
        let half = range / 2
        return [1, 2, 3, half - 2, half - 1, half, half + 1, half + 2, range - 2, range - 1]
    }

    @Test func theNewestTicketWinsWhenPushesArriveOutOfOrderAtAnyAge() async {
        await onOwnThread {
            // Start from every position of the wrap, then let the newer push overtake the older one.
            for base in Self.sampleTickets {
                for operationIsBarrier in [false, true] {
                    var machine = OpQueueStateMachine()
                    _ = machine.setSuspended(true)
                    let x = BlockOp {}
                    x.membership.isBarrier = operationIsBarrier
                    machine.addMember(x)
                    let older = Self.advance(base)
                    let newer = Self.advance(older)
                    _ = machine.push(ReadyLists.Entry(operation: x, ticket: base), priority: .normal, callerWillPoll: false)
                    _ = machine.push(ReadyLists.Entry(operation: x, ticket: newer), priority: .low, callerWillPoll: false)
                    _ = machine.push(ReadyLists.Entry(operation: x, ticket: older), priority: .high, callerWillPoll: false)
                    _ = machine.setSuspended(false)
                    if machine.pendingDrainers > 0 { machine.drainerStarted() }
                    let popped = popAll(&machine)
                    #expect(popped.count == 1 && popped.first?.1 == newer, "base \(base), barrier: \(operationIsBarrier)")
                }
            }
        }
    }

    @Test func aTicketIsNewerThanTheHalfRangeBeforeItAndOlderThanTheHalfRangeAfterIt() async {
        await onOwnThread {
            for ticket in Self.sampleTickets {
                for distance in Self.sampleDistances {
                    var later = ticket
                    for _ in 0..<distance { later = Self.advance(later) }
                    #expect(Op.isNewer(later, than: ticket) == (distance < Self.range / 2), "\(later) vs \(ticket)")
                    #expect(Op.isNewer(ticket, than: later) == (distance > Self.range / 2), "\(ticket) vs \(later)")
                }
                #expect(!Op.isNewer(ticket, than: ticket))
                var lap = ticket
                for _ in 0..<Self.range { lap = Self.advance(lap) }
                #expect(lap == ticket, "a lap of \(Self.range) tickets comes back to \(ticket)")
            }
        }
    }
}
