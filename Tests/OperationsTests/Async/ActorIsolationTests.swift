import Testing
import Dispatch
@testable import Operations

private actor Counter {
    var value = 0
    func increment() -> Int {
        value += 1
        return value
    }
}

@MainActor private var mainActorCounter = 0

@Suite struct ActorIsolationTests {
    @Test func aBodyCanRunOnAGivenActor() async throws {
        let counter = Counter()
        let queue = OpQueue()
        let ops = (0..<10).map { _ in queue.addOperation(on: counter) { counter in counter.increment() } }
        var results: [Int] = []
        for op in ops { results.append(try await op.value) }
        #expect(results.sorted() == Array(1...10))
        #expect(await counter.value == 10)
    }

    @Test func aBodyCanRunOnTheMainActor() async throws {
        let queue = OpQueue()
        let value = try await queue.addOperation { @MainActor () -> Int in
            MainActor.assertIsolated()
            mainActorCounter += 1
            return mainActorCounter
        }.value
        #expect(value >= 1)
    }

    @Test func mainQueueOperationsRunIsolatedToTheMainActor() async {
        let isolated = LockedBox(false)
        let op = BlockOp {
            MainActor.assumeIsolated {
                mainActorCounter += 1
                isolated.withLockedValue { $0 = true }
            }
        }
        await OpQueue.main.addOperations([op], waitUntilFinished: true)
        #expect(isolated.withLockedValue { $0 })
    }

    @Test @MainActor func mainActorCodeCanAwaitMainQueueOperations() async {
        // Awaiting suspends: the main actor stays free to run the main queue's operation.
        let op = BlockOp { MainActor.assumeIsolated { mainActorCounter += 1 } }
        OpQueue.main.addOperation(op)
        await op.waitUntilFinished()
        #expect(op.isFinished)
    }
}
