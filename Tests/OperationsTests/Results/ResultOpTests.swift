import Testing
@testable import Operations

/// An error to fail operations with, told apart by `id`.
private struct ResultOpFailure: Error, Equatable {
    let id: Int
}

/// An object captured by a closure, to see when the closure is released.
private final class CapturedObject: Sendable {
    let value: Int
    init(value: Int) { self.value = value }
}

/// An existing object whose methods the invocation operations call.
private final class Calculator: Sendable {
    let calls = EventLog<String>()

    func double(_ value: Int) -> Int {
        calls.append("double(\(value))")
        return value * 2
    }

    func check(_ value: Int) throws -> Int {
        calls.append("check(\(value))")
        if value < 0 { throw ResultOpFailure(id: value) }
        return value
    }
}

/// The value of a finished operation, `nil` while it has no output, or `-1` for a failure: written
/// once against the protocol, for every operation that produces an `Int`.
private func valueOrMarker(of op: some ProducesOutput<Int>) -> Int? {
    switch op.output {
    case .success(let value)?: value
    case .failure?: -1
    case nil: nil
    }
}

/// The error of a failed output, `nil` for a success or no output yet.
private func failure<Value>(of output: Result<Value, any Error>?) -> (any Error)? {
    if case .failure(let error)? = output { return error }
    return nil
}

@Suite struct ResultOpTests {
    // MARK: ResultOp

    @Test func resultOpKeepsTheValueItsClosureReturns() throws {
        let op = ResultOp { 6 * 7 }
        op.start()
        #expect(op.isFinished)
        #expect(try op.output?.get() == 42)
        #expect(op.error == nil)
        #expect(!op.isCancelled)
    }

    @Test func resultOpInAQueueKeepsItsValue() async throws {
        let queue = OpQueue()
        let ops = (0..<8).map { index in ResultOp { "value \(index)" } }
        await queue.addOperations(ops, waitUntilFinished: true)
        for (index, op) in ops.enumerated() {
            #expect(try op.output?.get() == "value \(index)")
        }
    }

    @Test func thrownErrorBecomesTheErrorAndTheFailure() {
        let op = ResultOp<Int> { throw ResultOpFailure(id: 1) }
        op.start()
        #expect(op.isFinished)
        #expect(!op.isCancelled)
        #expect(op.error as? ResultOpFailure == ResultOpFailure(id: 1))
        #expect(failure(of: op.output) as? ResultOpFailure == ResultOpFailure(id: 1))
    }

    @Test func thrownErrorFailsADependentWithNoFailedDependencies() async {
        let queue = OpQueue()
        let ran = EventLog<String>()
        let op = ResultOp<Int> { throw ResultOpFailure(id: 2) }
        let dependent = BlockOp { ran.append("dependent") }
        dependent.addDependency(op)
        dependent.addCondition(.noFailedDependencies)
        await queue.addOperations([op, dependent], waitUntilFinished: true)
        #expect(ran.all.isEmpty)
        #expect(dependent.isCancelled)
        let conditionFailure = dependent.error as? ConditionFailedError
        #expect(conditionFailure?.underlyingError as? ResultOpFailure == ResultOpFailure(id: 2))
    }

    @Test func outputIsNilBeforeTheOperationFinishes() throws {
        let seenWhileRunning = EventLog<String>()
        let op = ResultOp<Int> {
            guard let running = Op.current as? ResultOp<Int> else {
                seenWhileRunning.append("no current operation")
                return 1
            }
            seenWhileRunning.append(running.output == nil ? "nil" : "output")
            return 1
        }
        let dependency = BlockOp {}
        op.addDependency(dependency)
        #expect(op.output == nil)   // pending, not ready
        dependency.start()
        #expect(op.isReady)
        #expect(op.output == nil)   // ready, not started
        op.start()
        #expect(seenWhileRunning.all == ["nil"])
        #expect(try op.output?.get() == 1)
    }

    @Test func cancelledBeforeStartDoesNotRunAndFailsWithCancellationError() {
        let ran = EventLog<String>()
        let op = ResultOp<Int> {
            ran.append("body")
            return 1
        }
        op.cancel()
        #expect(op.output == nil)   // cancelled, but not finished yet
        op.start()
        #expect(op.isFinished)
        #expect(ran.all.isEmpty)
        #expect(op.error == nil)
        #expect(failure(of: op.output) is CancellationError)
    }

    @Test func cancelledInAQueueBeforeStartDoesNotRun() async {
        let queue = OpQueue()
        queue.isSuspended = true
        let ran = EventLog<String>()
        let op = ResultOp<Int> {
            ran.append("body")
            return 1
        }
        queue.addOperation(op)
        op.cancel()
        queue.isSuspended = false
        await op.waitUntilFinished()
        #expect(ran.all.isEmpty)
        #expect(failure(of: op.output) is CancellationError)
    }

    @Test func cancelledWithAnErrorFailsWithThatError() {
        let ran = EventLog<String>()
        let op = ResultOp<Int> {
            ran.append("body")
            return 1
        }
        op.cancel(with: ResultOpFailure(id: 3))
        op.start()
        #expect(ran.all.isEmpty)
        #expect(op.error as? ResultOpFailure == ResultOpFailure(id: 3))
        #expect(failure(of: op.output) as? ResultOpFailure == ResultOpFailure(id: 3))
    }

    @Test func cancelledWhileRunningFailsEvenThoughTheClosureReturned() {
        let op = ResultOp<Int> {
            Op.current?.cancel()
            return 1
        }
        op.start()
        #expect(op.isCancelled)
        #expect(failure(of: op.output) is CancellationError)
    }

    @Test func closureIsReleasedAfterRunning() throws {
        weak var weakCaptured: CapturedObject?
        let op: ResultOp<Int>
        do {
            let captured = CapturedObject(value: 5)
            weakCaptured = captured
            op = ResultOp { captured.value * 2 }
        }
        #expect(weakCaptured != nil, "the closure holds what it captured until it runs")
        op.start()
        #expect(weakCaptured == nil, "the closure was not released after running")
        #expect(try op.output?.get() == 10)
    }

    @Test func closureIsReleasedAfterThrowing() {
        weak var weakCaptured: CapturedObject?
        let op: ResultOp<Int>
        do {
            let captured = CapturedObject(value: 7)
            weakCaptured = captured
            op = ResultOp { throw ResultOpFailure(id: captured.value) }
        }
        #expect(weakCaptured != nil)
        op.start()
        #expect(weakCaptured == nil, "the closure was not released after throwing")
        #expect(op.error as? ResultOpFailure == ResultOpFailure(id: 7))
    }

    // MARK: AsyncBlockOp

    @Test func asyncBlockOpOutputMatchesItsValue() async throws {
        let queue = OpQueue()
        let op = AsyncBlockOp<Int> {
            await Task.yield()
            return 99
        }
        #expect(op.output == nil)
        queue.addOperation(op)
        let value = try await op.value
        #expect(value == 99)
        #expect(try op.output?.get() == value)
    }

    @Test func asyncBlockOpThrownErrorIsItsFailedOutput() async {
        let queue = OpQueue()
        let op = AsyncBlockOp<Int> {
            await Task.yield()
            throw ResultOpFailure(id: 4)
        }
        queue.addOperation(op)
        await #expect(throws: ResultOpFailure(id: 4)) { try await op.value }
        #expect(failure(of: op.output) as? ResultOpFailure == ResultOpFailure(id: 4))
        #expect(op.error as? ResultOpFailure == ResultOpFailure(id: 4))
    }

    @Test func asyncBlockOpCancelledBeforeStartFailsWithCancellationError() async {
        let queue = OpQueue()
        let ran = EventLog<String>()
        let op = AsyncBlockOp<Int> {
            ran.append("body")
            return 1
        }
        op.cancel()
        queue.addOperation(op)
        await #expect(throws: CancellationError.self) { try await op.value }
        #expect(ran.all.isEmpty)
        #expect(failure(of: op.output) is CancellationError)
    }

    // MARK: InvocationOp

    @Test func invocationOpOutputIsWhatTheMethodReturned() throws {
        let calculator = Calculator()
        let op = InvocationOp(target: calculator, invoking: Calculator.double, with: 21)
        #expect(op.output == nil)
        op.start()
        #expect(try op.output?.get() == 42)
        #expect(try op.result == 42)
        #expect(calculator.calls.all == ["double(21)"])
    }

    @Test func invocationOpThrownErrorIsItsFailedOutputAndItsError() {
        let calculator = Calculator()
        let op = InvocationOp(target: calculator, invoking: Calculator.check, with: -5)
        op.start()
        #expect(!op.isCancelled)
        #expect(failure(of: op.output) as? ResultOpFailure == ResultOpFailure(id: -5))
        #expect(op.error as? ResultOpFailure == ResultOpFailure(id: -5))
        do {
            _ = try op.result
            Issue.record("result did not throw")
        } catch {
            guard case .failed(let underlying) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(underlying as? ResultOpFailure == ResultOpFailure(id: -5))
        }
    }

    @Test func invocationOpCancelledBeforeStartFailsWithCancellationError() {
        let calculator = Calculator()
        let op = InvocationOp(target: calculator, invoking: Calculator.double, with: 1)
        op.cancel()
        op.start()
        #expect(calculator.calls.all.isEmpty)
        #expect(failure(of: op.output) is CancellationError)
        let error = #expect(throws: InvocationOpError.self) { try op.result }
        guard case .cancelled? = error else {
            Issue.record("expected InvocationOpError.cancelled, got \(String(describing: error))")
            return
        }
    }

    @Test func invocationOpCancelledWithAnErrorFailsWithThatError() {
        let op = InvocationOp<Int>(invocation: { 1 })
        op.cancel(with: ResultOpFailure(id: 8))
        op.start()
        #expect(failure(of: op.output) as? ResultOpFailure == ResultOpFailure(id: 8))
    }

    // MARK: The protocol

    @Test func genericCodeReadsTheOutputOfEveryProducer() async {
        let queue = OpQueue()
        let result = ResultOp { 1 }
        let asyncBlock = AsyncBlockOp<Int> {
            await Task.yield()
            return 2
        }
        let invocation = InvocationOp(target: Calculator(), invoking: Calculator.double, with: 3)
        let failing = ResultOp<Int> { throw ResultOpFailure(id: 0) }
        #expect(valueOrMarker(of: result) == nil)
        #expect(valueOrMarker(of: asyncBlock) == nil)
        #expect(valueOrMarker(of: invocation) == nil)
        await queue.addOperations([result, asyncBlock, invocation, failing], waitUntilFinished: true)
        #expect(valueOrMarker(of: result) == 1)
        #expect(valueOrMarker(of: asyncBlock) == 2)
        #expect(valueOrMarker(of: invocation) == 6)
        #expect(valueOrMarker(of: failing) == -1)
        let producers: [any ProducesOutput<Int>] = [result, asyncBlock, invocation]
        #expect(producers.compactMap { try? $0.output?.get() } == [1, 2, 6])
    }
}
