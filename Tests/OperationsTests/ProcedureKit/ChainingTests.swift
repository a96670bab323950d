import Testing
@testable import Operations

/// `then(do:)` and `enqueue(on:)`: chains written in the order they run.
@Suite struct ChainingTests {
    @Test func thenMakesTheNextDependOnThisOneAndReturnsIt() async {
        let log = EventLog<String>()
        let fetch = BlockOp { log.append("fetch") }
        let parse = BlockOp { log.append("parse") }
        let store = BlockOp { log.append("store") }
        let last = fetch.then(do: parse).then(do: store)
        #expect(last === store)
        #expect(parse.dependencies.map(ObjectIdentifier.init) == [ObjectIdentifier(fetch)])
        #expect(store.dependencies.map(ObjectIdentifier.init) == [ObjectIdentifier(parse)])
        let queue = OpQueue()
        [store, parse, fetch].enqueue(on: queue)   // added in reverse: the dependencies order them
        await queue.waitUntilAllOperationsAreFinished()
        #expect(log.all == ["fetch", "parse", "store"])
    }

    @Test func aFanOutAndAFanInFromSequences() async {
        let log = EventLog<String>()
        let start = BlockOp { log.append("start") }
        let middles = (0..<3).map { index in BlockOp { log.append("middle \(index)") } }
        let end = BlockOp { log.append("end") }
        let returned = start.then(do: middles)
        #expect(returned.map(ObjectIdentifier.init) == middles.map(ObjectIdentifier.init))
        #expect(middles.then(do: end) === end)
        #expect(end.dependencies.count == 3)
        let queue = OpQueue()
        let added = ([end] + middles + [start]).enqueue(on: queue)
        #expect(added.count == 5)
        await queue.waitUntilAllOperationsAreFinished()
        let events = log.all
        #expect(events.first == "start" && events.last == "end")
        #expect(Set(events[1...3]) == ["middle 0", "middle 1", "middle 2"])
    }

    @Test func enqueueAddsEveryOperationWithoutWaiting() async {
        let gates = [Gate(), Gate()]
        let held = gates.map { gate in BlockOp { gate.wait() } }
        let queue = OpQueue()
        let added = held.enqueue(on: queue)
        #expect(added.map(ObjectIdentifier.init) == held.map(ObjectIdentifier.init))
        #expect(added.allSatisfy { $0.withState { $0.queue } === queue })
        #expect(!held.contains { $0.isFinished }, "it returned without waiting")
        for gate in gates { gate.open() }
        await queue.waitUntilAllOperationsAreFinished()
    }
}
