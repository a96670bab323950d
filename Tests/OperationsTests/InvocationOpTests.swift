import Testing
@testable import Operations

private struct ModelError: Error, Equatable {
    let code: Int
}

/// An existing object whose methods the operations call.
private final class Model: Sendable {
    /// The calls made, in order.
    let calls = EventLog<String>()
    /// Opened by `slowDouble` once it has started.
    let started = Gate()
    /// Lets `slowDouble` return.
    let release = Gate()

    func resize(_ width: Int) -> Int {
        calls.append("resize(\(width))")
        return width / 2
    }

    func answer() -> String {
        calls.append("answer()")
        return "forty-two"
    }

    func touch() {
        calls.append("touch()")
    }

    func validate(_ code: Int) throws -> Int {
        calls.append("validate(\(code))")
        if code < 0 { throw ModelError(code: code) }
        return code
    }

    func slowDouble(_ value: Int) -> Int {
        calls.append("slowDouble(\(value))")
        started.open()
        _ = release.wait()
        return value * 2
    }
}

/// Fails the test unless reading `op.result` throws an error that `matches` accepts.
private func expectResultThrows<Result: Sendable>(
    _ op: InvocationOp<Result>,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ matches: (InvocationOpError) -> Bool
) {
    do {
        let value = try op.result
        Issue.record("expected an error, got \(value)", sourceLocation: sourceLocation)
    } catch {
        #expect(matches(error), "unexpected \(error)", sourceLocation: sourceLocation)
    }
}

@Suite struct InvocationOpTests {
    @Test func methodWithArgumentKeepsItsReturnValueInResult() throws {
        let model = Model()
        let op = InvocationOp(target: model, invoking: Model.resize, with: 1024)
        op.start()
        #expect(try op.result == 512)
        #expect(model.calls.all == ["resize(1024)"])
    }

    @Test func methodWithoutArgumentKeepsItsReturnValueInResult() throws {
        let model = Model()
        let op = InvocationOp(target: model, invoking: Model.answer)
        op.start()
        #expect(try op.result == "forty-two")
        #expect(model.calls.all == ["answer()"])
    }

    @Test func voidMethodGivesAVoidResult() throws {
        let model = Model()
        let op = InvocationOp(target: model, invoking: Model.touch)
        op.start()
        try op.result
        #expect(model.calls.all == ["touch()"])
    }

    @Test func invocationClosureKeepsItsReturnValueInResult() throws {
        let model = Model()
        let op = InvocationOp(invocation: { model.resize(640) + 1 })
        op.start()
        #expect(try op.result == 321)
    }

    @Test func queuedInvocationCallsTheMethodOnceOnAWorker() throws {
        let model = Model()
        let queue = OpQueue()
        let op = InvocationOp(target: model, invoking: Model.resize, with: 300)
        queue.addOperations([op], waitUntilFinished: true)
        #expect(try op.result == 150)
        #expect(model.calls.all == ["resize(300)"])
    }

    @Test func dependentAndCompletionBlockCanReadTheResult() {
        let model = Model()
        let queue = OpQueue()
        let op = InvocationOp(target: model, invoking: Model.resize, with: 100)
        let fromDependent = EventLog<Int>()
        let fromCompletion = EventLog<Int>()
        let dependent = BlockOp {
            if let value = try? op.result { fromDependent.append(value) }
        }
        dependent.addDependency(op)
        op.completionBlock = {
            if let value = try? op.result { fromCompletion.append(value) }
        }
        queue.addOperations([op, dependent], waitUntilFinished: true)
        #expect(fromDependent.all == [50])
        #expect(fromCompletion.all == [50])
    }

    @Test func readingResultBeforeTheOperationRunsThrowsNotFinished() {
        let op = InvocationOp(target: Model(), invoking: Model.resize, with: 10)
        expectResultThrows(op) { if case .notFinished = $0 { true } else { false } }
    }

    @Test func readingResultWhileTheMethodRunsThrowsNotFinished() throws {
        let model = Model()
        let queue = OpQueue()
        let op = InvocationOp(target: model, invoking: Model.slowDouble, with: 21)
        queue.addOperation(op)
        #expect(model.started.wait())
        expectResultThrows(op) { if case .notFinished = $0 { true } else { false } }
        model.release.open()
        op.waitUntilFinished()
        #expect(try op.result == 42)
    }

    @Test func cancelledBeforeRunningThrowsCancelledAndNeverCallsTheMethod() {
        let model = Model()
        let op = InvocationOp(target: model, invoking: Model.resize, with: 10)
        op.cancel()
        op.start()
        #expect(op.isFinished)
        expectResultThrows(op) { if case .cancelled = $0 { true } else { false } }
        #expect(model.calls.count == 0)
    }

    @Test func cancelledWhileRunningThrowsCancelledEvenThoughTheMethodReturned() {
        let model = Model()
        let queue = OpQueue()
        let op = InvocationOp(target: model, invoking: Model.slowDouble, with: 5)
        queue.addOperation(op)
        #expect(model.started.wait())
        op.cancel()
        model.release.open()
        op.waitUntilFinished()
        #expect(model.calls.all == ["slowDouble(5)"])
        expectResultThrows(op) { if case .cancelled = $0 { true } else { false } }
    }

    @Test func cancellingAfterFinishingKeepsTheResult() throws {
        let op = InvocationOp(target: Model(), invoking: Model.resize, with: 8)
        op.start()
        op.cancel()
        #expect(!op.isCancelled)
        #expect(try op.result == 4)
    }

    @Test func throwingMethodGivesFailedWithItsError() throws {
        let model = Model()
        let op = InvocationOp(target: model, invoking: Model.validate, with: -7)
        op.start()
        #expect(op.isFinished)
        expectResultThrows(op) { error in
            guard case .failed(let underlying) = error else { return false }
            return (underlying as? ModelError) == ModelError(code: -7)
        }
        let fine = InvocationOp(target: model, invoking: Model.validate, with: 7)
        fine.start()
        #expect(try fine.result == 7)
    }

    @Test func throwingClosureGivesFailedWithItsError() {
        let op = InvocationOp<Int>(invocation: { throw ModelError(code: 3) })
        op.start()
        expectResultThrows(op) { error in
            guard case .failed(let underlying) = error else { return false }
            return (underlying as? ModelError) == ModelError(code: 3)
        }
    }

    @Test func errorsDescribeThemselves() {
        #expect(InvocationOpError.cancelled.description.contains("cancelled"))
        #expect(InvocationOpError.notFinished.description.contains("waitUntilFinished()"))
        #expect(InvocationOpError.failed(ModelError(code: 9)).description.contains("ModelError(code: 9)"))
    }
}
