import Testing
@testable import Operations

/// Identities of operations, to compare member lists by reference.
private func memberIDs(_ operations: [Op]?) -> [ObjectIdentifier]? {
    operations?.map(ObjectIdentifier.init)
}

@Suite struct QueueObservationTests {
    @Test func operationCountReportsAddsSynchronouslyAndDeparturesAsOperationsLeave() {
        let queue = OpQueue()
        queue.isSuspended = true
        let changes = EventLog<[Int]>()
        let token = queue.observe(\.operationCount, options: [.old, .new]) { _, change in
            changes.append([change.oldValue!, change.newValue!])
        }
        queue.addOperation(BlockOp {})
        #expect(changes.all == [[0, 1]])
        // Several operations added in one call are one change.
        queue.addOperations([BlockOp {}, BlockOp {}], waitUntilFinished: false)
        #expect(changes.all == [[0, 1], [1, 3]])
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        // Departures are delivered by the worker threads that finish the operations; the last
        // one may still be on its way when the wait returns (another thread may be delivering).
        #expect(eventually { changes.count == 5 })
        #expect(changes.all == [[0, 1], [1, 3], [3, 2], [2, 1], [1, 0]])
        token.invalidate()
    }

    @Test func operationsReportsTheMemberListsBeforeAndAfter() {
        let queue = OpQueue()
        queue.isSuspended = true
        let changes = EventLog<[[ObjectIdentifier]?]>()
        let token = queue.observe(\.operations, options: [.old, .new]) { _, change in
            changes.append([memberIDs(change.oldValue), memberIDs(change.newValue)])
        }
        // One at a time, b after a: a leaves the queue before b starts.
        queue.maxConcurrentOperationCount = 1
        let a = BlockOp {}
        let b = BlockOp {}
        b.addDependency(a)
        queue.addOperation(a)
        queue.addOperation(b)
        let (ia, ib) = (ObjectIdentifier(a), ObjectIdentifier(b))
        #expect(changes.all == [[[], [ia]], [[ia], [ia, ib]]])
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(eventually { changes.count == 4 })
        #expect(changes.all == [[[], [ia]], [[ia], [ia, ib]], [[ia, ib], [ib]], [[ib], []]])
        token.invalidate()
    }

    @Test func operationsInitialValueListsTheCurrentMembers() {
        let queue = OpQueue()
        queue.isSuspended = true
        let a = BlockOp {}
        queue.addOperation(a)
        let changes = EventLog<[ObjectIdentifier]?>()
        let token = queue.observe(\.operations, options: [.initial, .new]) { _, change in
            changes.append(memberIDs(change.newValue))
        }
        #expect(changes.all == [[ObjectIdentifier(a)]])
        token.invalidate()
        queue.cancelAllOperations()
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
    }

    @Test func maxConcurrentOperationCountChangesCarryOldAndNewValues() {
        let queue = OpQueue()
        let changes = EventLog<[Int]>()
        let token = queue.observe(\.maxConcurrentOperationCount, options: [.old, .new]) { _, change in
            changes.append([change.oldValue!, change.newValue!])
        }
        queue.maxConcurrentOperationCount = 2
        queue.maxConcurrentOperationCount = OpQueue.defaultMaxConcurrentOperationCount
        #expect(changes.all == [[-1, 2], [2, -1]])
        token.invalidate()
    }

    @Test func isSuspendedChangesCarryOldAndNewValues() {
        let queue = OpQueue()
        let changes = EventLog<[Bool]>()
        let token = queue.observe(\.isSuspended, options: [.initial, .old, .new]) { _, change in
            changes.append([change.oldValue, change.newValue].compactMap { $0 })
        }
        #expect(changes.all == [[false]])
        queue.isSuspended = true
        #expect(changes.all == [[false], [false, true]])
        queue.isSuspended = false
        #expect(changes.all == [[false], [false, true], [true, false]])
        token.invalidate()
    }

    @Test func nameChangesCarryOldAndNewNamesIncludingTheDefault() {
        let queue = OpQueue()
        let defaultName = queue.name
        #expect(defaultName?.hasPrefix("OpQueue") == true)
        let changes = EventLog<[String?]>()
        let token = queue.observe(\.name, options: [.old, .new]) { _, change in
            changes.append([change.oldValue!, change.newValue!])
        }
        queue.name = "downloads"
        queue.name = nil
        #expect(changes.all == [[defaultName, "downloads"], ["downloads", defaultName]])
        #expect(queue.name == defaultName)
        token.invalidate()
    }

    @Test func invalidatedAndReleasedTokensStopQueueDelivery() {
        let queue = OpQueue()
        let log = EventLog<String>()
        let invalidated = queue.observe(\.name, options: [.new]) { _, change in
            log.append("invalidated: \(change.newValue!!)")
        }
        var released: ObservationToken? = queue.observe(\.name, options: [.new]) { _, change in
            log.append("released: \(change.newValue!!)")
        }
        queue.name = "first"
        invalidated.invalidate()
        released = nil
        queue.name = "second"
        #expect(log.all == ["invalidated: first", "released: first"])
        #expect(released == nil)
    }

    @Test(.oneExitTestAtATime) func observingAPropertyThatIsNotObservableTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.name = "watched-queue"
            let token = queue.observe(\.qualityOfService) { _, _ in }
            token.invalidate()
        }
        expectStandardError(of: result, toContain: ["not observable", "watched-queue"])
    }

    @Test func operationsObservedWithoutValuesAreNotCopied() {
        // An observer that asked for no values gets every change without them: the member list
        // is not copied on each addition and departure.
        let queue = OpQueue()
        let changes = EventLog<Bool>()
        let observation = queue.observe(\.operations) { _, change in
            changes.append(change.oldValue == nil && change.newValue == nil)
        }
        #expect(!queue.registry.observesValues(QueueProperty.operations.rawValue))
        queue.isSuspended = true
        queue.addOperations([BlockOp {}, BlockOp {}], waitUntilFinished: false)
        queue.addOperation(BlockOp {})
        queue.isSuspended = false
        #expect(queueEmpties(queue))
        #expect(eventually { changes.count == 5 })   // two additions, three departures
        #expect(changes.all.allSatisfy { $0 })
        observation.invalidate()
    }

    @Test func operationsObservedWithValuesCarryTheMembers() {
        let queue = OpQueue()
        let counts = EventLog<[Int]>()
        let observation = queue.observe(\.operations, options: [.old, .new]) { _, change in
            counts.append([change.oldValue!.count, change.newValue!.count])
        }
        #expect(queue.registry.observesValues(QueueProperty.operations.rawValue))
        queue.isSuspended = true
        queue.addOperations([BlockOp {}, BlockOp {}], waitUntilFinished: false)
        #expect(counts.all == [[0, 2]])
        queue.isSuspended = false
        #expect(queueEmpties(queue))
        observation.invalidate()
    }
}
