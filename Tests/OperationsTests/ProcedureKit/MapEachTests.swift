import Testing
@testable import Operations

private struct Missing: Error, Equatable {
    let id: Int
}

/// `mapEach(_:)`: one operation per element of a producer's array, outputs in order.
@Suite struct MapEachTests {
    @Test func eachElementRunsThroughAnOperationAndTheOutputsKeepTheirOrder() async throws {
        let ids = ResultOp { [3, 1, 2] }
        let doubled = ids.mapEach { id in
            AsyncBlockOp<Int> {
                try await Task.sleep(for: .milliseconds(id * 5))   // the last element finishes first
                return id * 2
            }
        }
        #expect(doubled.dependencies.map(ObjectIdentifier.init) == [ObjectIdentifier(ids)])
        await OpQueue().addOperations([ids, doubled], waitUntilFinished: true)
        #expect(try await doubled.value == [6, 2, 4])
        #expect(doubled.childCount == 3)
    }

    @Test func anEmptyArrayProducesAnEmptyArray() async throws {
        let none = ResultOp<[Int]> { [] }
        let mapped = none.mapEach { id in ResultOp { id } }
        await OpQueue().addOperations([none, mapped], waitUntilFinished: true)
        #expect(try await mapped.value == [])
    }

    @Test func aFailedProducerMakesNoOperationAndPassesItsFailureOn() async {
        let made = EventLog<Int>()
        let ids = ResultOp<[Int]> { throw Missing(id: 0) }
        let mapped = ids.mapEach { id in
            made.append(id)
            return ResultOp { id }
        }
        await OpQueue().addOperations([ids, mapped], waitUntilFinished: true)
        #expect(made.count == 0 && mapped.childCount == 0)
        #expect(mapped.error as? Missing == Missing(id: 0))
        await #expect(throws: Missing(id: 0)) { try await mapped.value }
    }

    @Test func theFirstFailedElementInOrderIsTheFailure() async {
        let ids = ResultOp { [1, 2, 3] }
        let mapped = ids.mapEach { id in
            ResultOp<Int> {
                if id >= 2 { throw Missing(id: id) }
                return id
            }
        }
        await OpQueue().addOperations([ids, mapped], waitUntilFinished: true)
        #expect(mapped.error is GroupError)
        await #expect(throws: Missing(id: 2)) { try await mapped.value }
    }

    @Test func aCancelledMapMakesNothing() async {
        let ids = ResultOp { [1, 2] }
        let mapped = ids.mapEach { id in ResultOp { id } }
        mapped.cancel()
        await OpQueue().addOperations([ids, mapped], waitUntilFinished: true)
        #expect(mapped.isCancelled && mapped.childCount == 0)
        await #expect(throws: CancellationError.self) { try await mapped.value }
    }
}
