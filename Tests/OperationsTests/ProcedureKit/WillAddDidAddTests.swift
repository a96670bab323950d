import Testing
@testable import Operations

/// `OpObserver.willAdd` and `didAdd`: an operation's observers hear of the operations it adds
/// (those it produces; a group's children), and may still change them in `willAdd`.
@Suite struct WillAddDidAddTests {
    private struct Recorder: OpObserver {
        let log: EventLog<String>
        func willAdd(_ operation: Op, operation added: Op) { log.append("willAdd \(added.name ?? "?")") }
        func didAdd(_ operation: Op, operation added: Op) { log.append("didAdd \(added.name ?? "?")") }
        func didProduce(_ operation: Op, operation produced: Op) { log.append("didProduce \(produced.name ?? "?")") }
    }

    @Test func aProducedOperationIsAnnouncedBeforeAndAfterItIsAdded() async {
        let log = EventLog<String>()
        let produced = BlockOp { log.append("produced runs") }
        produced.name = "child"
        let producer = BlockOp { Op.current?.produce(produced) }
        producer.addObserver(Recorder(log: log))
        let queue = OpQueue()
        await queue.addOperations([producer], waitUntilFinished: false)
        await queue.waitUntilAllOperationsAreFinished()
        let events = log.all.filter { !$0.hasSuffix("runs") }
        #expect(events == ["willAdd child", "didAdd child", "didProduce child"])
    }

    @Test func willAddMayStillChangeTheProducedOperation() async {
        let ran = EventLog<String>()
        let queuedWhenAnnounced = EventLog<Bool>()
        let produced = BlockOp { ran.append("produced") }
        let producer = BlockOp { Op.current?.produce(produced) }
        producer.addObserver(BlockObserver(willAdd: { _, added in
            queuedWhenAnnounced.append(added.withState { $0.queue } != nil)
            added.addCondition(.ignoringFailure(.predicate("not today") { _ in false }))
        }))
        let queue = OpQueue()
        queue.addOperation(producer)
        await queue.waitUntilAllOperationsAreFinished()
        #expect(queuedWhenAnnounced.all == [false], "not in a queue yet when announced")
        #expect(produced.isFinished && produced.isCancelled && produced.error == nil)
        #expect(ran.count == 0)
    }

    @Test func aGroupsObserversHearOfItsChildren() async {
        let log = EventLog<String>()
        let first = BlockOp {}
        first.name = "first"
        let group = GroupOp(operations: [first])   // added before any observer: not announced
        let gate = Gate()
        let holder = BlockOp { gate.wait() }
        holder.name = "holder"
        group.addChild(holder)
        group.addObserver(Recorder(log: log))
        OpQueue().addOperation(group)
        #expect(await eventuallyAsync { holder.isExecuting })
        let late = BlockOp {}
        late.name = "late"
        group.addChildren([late])
        #expect(log.all == ["willAdd late", "didAdd late"])
        gate.open()
        #expect(await eventuallyAsync { group.isFinished })
    }

    @Test func aGroupsWillAddMayConfigureTheChild() async {
        let ran = EventLog<String>()
        let group = GroupOp()
        group.addObserver(BlockObserver(willAdd: { _, child in
            child.addCondition(.predicate("allowed") { _ in false })
        }))
        let child = BlockOp { ran.append("child") }
        group.addChild(child)
        await OpQueue().addOperations([group], waitUntilFinished: true)
        #expect(child.isCancelled && child.error is ConditionFailedError)
        #expect(group.error is GroupError)
        #expect(ran.count == 0)
    }
}
