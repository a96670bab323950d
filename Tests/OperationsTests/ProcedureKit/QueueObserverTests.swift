import Testing
@testable import Operations

/// `OpQueue.addObserver(_:)`: observers of a whole queue (ProcedureKit's queue delegate).
@Suite struct QueueObserverTests {
    private struct Recorder: OpQueueObserver {
        let log: EventLog<String>
        func willAdd(_ queue: OpQueue, operation: Op) { log.append("willAdd \(operation.name ?? "?")") }
        func didAdd(_ queue: OpQueue, operation: Op) { log.append("didAdd \(operation.name ?? "?")") }
        func willFinish(_ queue: OpQueue, operation: Op, error: (any Error)?) { log.append("willFinish \(operation.name ?? "?")") }
        func didFinish(_ queue: OpQueue, operation: Op, error: (any Error)?) {
            log.append("didFinish \(operation.name ?? "?")\(error == nil ? "" : " failed")")
        }
    }

    private struct OwnObserver: OpObserver {
        let log: EventLog<String>
        func willFinish(_ operation: Op, error: (any Error)?) { log.append("own willFinish") }
        func didFinish(_ operation: Op, error: (any Error)?) { log.append("own didFinish") }
    }

    private static func named(_ name: String, _ body: @escaping @Sendable () -> Void = {}) -> BlockOp {
        let op = BlockOp(block: body)
        op.name = name
        return op
    }

    @Test func eachOperationIsAnnouncedAsItIsAddedAndAsItFinishes() async {
        let log = EventLog<String>()
        let queue = OpQueue()
        queue.addObserver(Recorder(log: log))
        let op = Self.named("a") { log.append("a runs") }
        op.addObserver(OwnObserver(log: log))
        await queue.addOperations([op], waitUntilFinished: true)
        #expect(await eventuallyAsync { log.count == 7 })
        let events = log.all
        #expect(events.first == "willAdd a")
        #expect(events.contains("didAdd a"))
        // Its own observers, added before it joined, come first; then the queue's.
        let finishing = events.filter { !$0.hasPrefix("willAdd") && !$0.hasPrefix("didAdd") && $0 != "a runs" }
        #expect(finishing == ["own willFinish", "willFinish a", "own didFinish", "didFinish a"])
    }

    @Test func willAddMayAddConditionsToEveryOperation() async {
        struct Gatekeeper: OpQueueObserver {
            func willAdd(_ queue: OpQueue, operation: Op) {
                operation.addCondition(.predicate("allowed") { $0.name != "forbidden" })
            }
        }
        let ran = EventLog<String>()
        let queue = OpQueue()
        queue.addObserver(Gatekeeper())
        let allowed = Self.named("allowed") { ran.append("allowed") }
        let forbidden = Self.named("forbidden") { ran.append("forbidden") }
        await queue.addOperations([allowed, forbidden], waitUntilFinished: true)
        #expect(ran.all == ["allowed"])
        #expect((forbidden.error as? ConditionFailedError)?.condition == "allowed")
    }

    @Test func failuresReachTheQueuesObservers() async {
        let log = EventLog<String>()
        let queue = OpQueue()
        queue.addObserver(Recorder(log: log))
        let failing = ResultOp<Int> { throw CancellationError() }
        failing.name = "f"
        await queue.addOperations([failing], waitUntilFinished: true)
        #expect(await eventuallyAsync { log.all.contains("didFinish f failed") })
    }

    @Test func operationsAddedBeforeTheObserverAndTurnedAwayAreNotAnnounced() async {
        let log = EventLog<String>()
        let queue = OpQueue()
        queue.isSuspended = true
        let early = Self.named("early")
        queue.addOperation(early)
        queue.addObserver(Recorder(log: log))
        queue.close()
        let late = Self.named("late")
        queue.addOperation(late)   // turned away: cancelled, finishes at once
        #expect(late.isFinished && late.isCancelled)
        queue.isSuspended = false
        await queue.waitUntilAllOperationsAreFinished()
        #expect(log.all.isEmpty, "\(log.all)")
    }
}
