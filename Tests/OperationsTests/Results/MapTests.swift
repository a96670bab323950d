import Testing
@testable import Operations

/// An error to fail producers and transforms with, told apart by `id`.
private struct MapTestFailure: Error, Equatable {
    let id: Int
}

/// An existing object whose method an invocation operation calls.
private final class Doubler: Sendable {
    func double(_ value: Int) -> Int { value * 2 }
}

/// The error of a failed output, `nil` for a success or no output yet.
private func mapFailure<Value>(of output: Result<Value, any Error>?) -> (any Error)? {
    if case .failure(let error)? = output { return error }
    return nil
}

/// Whether `op` depends on `dependency` (by identity).
private func depends(_ op: Op, on dependency: Op) -> Bool {
    op.dependencies.contains { $0 === dependency }
}

@Suite struct MapTests {
    // MARK: Choosing the overload

    @Test func syncTransformMakesAResultOpThatDependsOnTheProducer() async throws {
        let producer = ResultOp { 21 }
        let mapped: ResultOp<Int> = producer.map { $0 * 2 }
        #expect(depends(mapped, on: producer))
        #expect(mapped.dependencies.count == 1)
        #expect(!mapped.isReady)
        await OpQueue().addOperations([mapped, producer], waitUntilFinished: true)
        #expect(try mapped.output?.get() == 42)
    }

    @Test func syncTransformInAnAsyncFunctionPicksTheSyncOverload() async throws {
        let producer = ResultOp { 21 }
        // No annotation: the closure has no `await`, so the sync overload (a ResultOp) is chosen
        // even in an `async` function.
        let mapped = producer.map { $0 * 2 }
        let erased: Any = mapped
        #expect(erased is ResultOp<Int>)
        #expect(!(erased is AsyncBlockOp<Int>))
        #expect(!mapped.isAsynchronous)
        await OpQueue().addOperations([producer, mapped], waitUntilFinished: true)
        #expect(try mapped.output?.get() == 42)
    }

    @Test func syncTransformInASyncFunctionPicksTheSyncOverload() throws {
        let producer = ResultOp { 4 }
        let mapped = producer.map { $0 + 1 }
        let erased: Any = mapped
        #expect(erased is ResultOp<Int>)
        producer.start()
        mapped.start()
        #expect(try mapped.output?.get() == 5)
    }

    @Test func asyncTransformMakesAnAsyncBlockOpThatDependsOnTheProducer() async throws {
        let producer = ResultOp { 20 }
        let mapped: AsyncBlockOp<Int> = producer.map { value in
            await Task.yield()
            return value + 1
        }
        let erased: Any = mapped
        #expect(erased is AsyncBlockOp<Int>)
        #expect(mapped.isAsynchronous)
        #expect(depends(mapped, on: producer))
        let queue = OpQueue()
        await queue.addOperations([mapped, producer], waitUntilFinished: false)
        #expect(try await mapped.value == 21)
        #expect(try mapped.output?.get() == 21)
        await queue.waitUntilAllOperationsAreFinished()
    }

    // MARK: Values

    @Test func mapsChain() async throws {
        let producer = ResultOp { 3 }
        let doubled = producer.map { $0 * 2 }
        let shifted = doubled.map { value in
            await Task.yield()
            return value + 1
        }
        let text = shifted.map { "value \($0)" }
        #expect(depends(doubled, on: producer))
        #expect(depends(shifted, on: doubled))
        #expect(depends(text, on: shifted))
        await OpQueue().addOperations([text, shifted, doubled, producer], waitUntilFinished: true)
        #expect(try doubled.output?.get() == 6)
        #expect(try shifted.output?.get() == 7)
        #expect(try text.output?.get() == "value 7")
    }

    @Test func transformRunsOnceTheProducerFinished() async throws {
        let log = EventLog<String>()
        let producer = ResultOp {
            log.append("producer")
            return 1
        }
        let mapped = producer.map { value in
            log.append("transform \(value)")
            return value
        }
        await OpQueue().addOperations([mapped, producer], waitUntilFinished: true)
        #expect(log.all == ["producer", "transform 1"])
    }

    @Test func mapOfAnInvocationOp() async throws {
        let producer = InvocationOp(target: Doubler(), invoking: Doubler.double, with: 8)
        let mapped = producer.map { "\($0)" }
        #expect(depends(mapped, on: producer))
        await OpQueue().addOperations([producer, mapped], waitUntilFinished: true)
        #expect(try mapped.output?.get() == "16")
    }

    @Test func mapOfAnAsyncBlockOp() async throws {
        let producer = AsyncBlockOp<[Int]> {
            await Task.yield()
            return [1, 2, 3]
        }
        let count = producer.map { $0.count }
        let sum = producer.map { values in
            await Task.yield()
            return values.reduce(0, +)
        }
        await OpQueue().addOperations([producer, count, sum], waitUntilFinished: true)
        #expect(try count.output?.get() == 3)
        #expect(try sum.output?.get() == 6)
    }

    // MARK: Failures

    @Test func failurePassesThroughWithoutCallingTheTransform() async {
        let log = EventLog<String>()
        let producer = ResultOp<Int> { throw MapTestFailure(id: 1) }
        let mapped = producer.map { value in
            log.append("transform \(value)")
            return value
        }
        await OpQueue().addOperations([producer, mapped], waitUntilFinished: true)
        #expect(log.all.isEmpty)
        #expect(mapped.error as? MapTestFailure == MapTestFailure(id: 1))
        #expect(mapFailure(of: mapped.output) as? MapTestFailure == MapTestFailure(id: 1))
        #expect(!mapped.isCancelled)
    }

    @Test func failurePassesThroughAChainAndAnAsyncTransform() async {
        let log = EventLog<String>()
        let producer = AsyncBlockOp<Int> { throw MapTestFailure(id: 2) }
        let first = producer.map { value in
            await Task.yield()
            log.append("first \(value)")
            return value
        }
        let second = first.map { value in
            log.append("second \(value)")
            return value
        }
        await OpQueue().addOperations([producer, first, second], waitUntilFinished: true)
        #expect(log.all.isEmpty)
        #expect(mapFailure(of: first.output) as? MapTestFailure == MapTestFailure(id: 2))
        #expect(mapFailure(of: second.output) as? MapTestFailure == MapTestFailure(id: 2))
        #expect(second.error as? MapTestFailure == MapTestFailure(id: 2))
    }

    @Test func throwingTransformFailsTheMappedOp() async {
        let producer = ResultOp { 5 }
        let mapped = producer.map { (value: Int) throws -> Int in
            throw MapTestFailure(id: value)
        }
        await OpQueue().addOperations([producer, mapped], waitUntilFinished: true)
        #expect(producer.error == nil)
        #expect(mapped.error as? MapTestFailure == MapTestFailure(id: 5))
        #expect(mapFailure(of: mapped.output) as? MapTestFailure == MapTestFailure(id: 5))
    }

    @Test func cancelledProducerMakesTheMappedOutputACancellationError() async {
        let log = EventLog<String>()
        let producer = ResultOp { 1 }
        let mapped = producer.map { value in
            log.append("transform \(value)")
            return value
        }
        producer.cancel()
        await OpQueue().addOperations([producer, mapped], waitUntilFinished: true)
        #expect(log.all.isEmpty)
        #expect(mapFailure(of: mapped.output) is CancellationError)
        #expect(mapped.error is CancellationError)
    }

    @Test func producerCancelledWithAnErrorPassesThatErrorThrough() async {
        let producer = ResultOp { 1 }
        let mapped = producer.map { value in
            await Task.yield()
            return value
        }
        producer.cancel(with: MapTestFailure(id: 3))
        await OpQueue().addOperations([producer, mapped], waitUntilFinished: true)
        #expect(mapFailure(of: mapped.output) as? MapTestFailure == MapTestFailure(id: 3))
    }
}
