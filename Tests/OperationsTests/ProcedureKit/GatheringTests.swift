import Testing
@testable import Operations

private struct Broken: Error, Equatable {
    let index: Int
}

/// `gathered()` and `reduced(_:_:)`: the outputs of many producers as one typed value, in the
/// producers' order.
@Suite struct GatheringTests {
    @Test func outputsAreGatheredInTheProducersOrderWhateverOrderTheyFinishIn() async throws {
        let gates = (0..<4).map { _ in Gate() }
        let producers = (0..<4).map { index in ResultOp { gates[index].wait(); return index * 10 } }
        let gathered = producers.gathered()
        #expect(gathered.dependencies.count == 4)
        let queue = OpQueue()
        (producers + [gathered]).enqueue(on: queue)
        for gate in gates.reversed() { gate.open() }   // the last finishes first
        #expect(try await gathered.value == [0, 10, 20, 30])
    }

    @Test func theFirstFailureInOrderDecides() async {
        let producers = (0..<3).map { index in
            ResultOp<Int> {
                if index > 0 { throw Broken(index: index) }
                return index
            }
        }
        let gathered = producers.gathered()
        let queue = OpQueue()
        await queue.addOperations(producers + [gathered], waitUntilFinished: true)
        #expect(gathered.error as? Broken == Broken(index: 1))
        await #expect(throws: Broken(index: 1)) { try await gathered.value }
    }

    @Test func aCancelledProducerFailsTheGatheringWithItsCancellation() async {
        let kept = ResultOp { 1 }
        let cancelled = ResultOp { 2 }
        cancelled.cancel()
        let gathered = [kept, cancelled].gathered()
        await OpQueue().addOperations([kept, cancelled, gathered], waitUntilFinished: true)
        #expect(gathered.error is CancellationError)
    }

    @Test func reducedCombinesInOrderFromTheInitialValue() async throws {
        let producers = ["a", "b", "c"].map { letter in AsyncBlockOp<String> { letter } }
        let joined = producers.reduced(">") { $0 + $1 }
        await OpQueue().addOperations(producers + [joined], waitUntilFinished: true)
        #expect(try await joined.value == ">abc")
        let nothing = [ResultOp<Int>]().reduced(7, +)
        await OpQueue().addOperations([nothing], waitUntilFinished: true)
        #expect(try await nothing.value == 7)
    }

    @Test func aFailureStopsTheCombination() async {
        let calls = EventLog<Int>()
        let producers = [ResultOp { 1 }, ResultOp<Int> { throw Broken(index: 9) }, ResultOp { 3 }]
        let sum = producers.reduced(0) { total, value in
            calls.append(value)
            return total + value
        }
        await OpQueue().addOperations(producers + [sum], waitUntilFinished: true)
        #expect(sum.error as? Broken == Broken(index: 9))
        #expect(calls.all == [1], "combine stops at the failure")
    }
}
