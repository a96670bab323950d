import Testing
@testable import Operations

private struct Failure: Error, Equatable {
    let code: Int
}

/// Two types of one name in different scopes, to check that a mismatch tells them apart.
private enum Cache { struct Entry: Sendable {} }
private enum Network { struct Entry: Sendable {} }

/// `op.value(as:)` waits without blocking a thread and returns the operation's value typed by the
/// caller: the operation's error or cancellation if it failed, an `OutputTypeMismatchError` that
/// names both types for a wrong type (checked first), and `()` for an operation with no output.
/// Every test waits with `await`.
@Suite struct ValueAsTypeTests {

    // MARK: The right type

    @Test func theOutputTypeGivesTheValueOfAnyOperation() async throws {
        let operations: [Op] = [ResultOp { 42 }, AsyncBlockOp { 42 }]
        await OpQueue().addOperations(operations, waitUntilFinished: false)
        for operation in operations {
            #expect(try await operation.value(as: Int.self) == 42, "\(operation)")
        }
    }

    @Test func itWaitsForTheOperationToFinish() async throws {
        let gate = Gate()
        let op = AsyncBlockOp<String> {
            await gate.waitOffThread()
            return "late"
        }
        OpQueue().addOperation(op)
        let waiter = Task { try await (op as Op).value(as: String.self) }
        #expect(!op.isFinished)
        gate.open()
        #expect(try await waiter.value == "late")
        #expect(op.isFinished)
    }

    // MARK: Failures

    @Test func aFailedOperationThrowsItsError() async {
        let op: Op = AsyncBlockOp<Int> { throw Failure(code: 1) }
        OpQueue().addOperation(op)
        await #expect(throws: Failure(code: 1)) { try await op.value(as: Int.self) }
    }

    @Test func aCancelledOperationThrowsCancellationErrorOrItsError() async {
        let cancelled: Op = ResultOp { 1 }
        cancelled.cancel()
        let cancelledWithError: Op = ResultOp { 1 }
        cancelledWithError.cancel(with: Failure(code: 2))
        await OpQueue().addOperations([cancelled, cancelledWithError], waitUntilFinished: false)

        await #expect(throws: CancellationError.self) { try await cancelled.value(as: Int.self) }
        await #expect(throws: Failure(code: 2)) { try await cancelledWithError.value(as: Int.self) }
    }

    @Test func cancellingTheAwaitingTaskCancelsTheOperationWhenAsked() async throws {
        let started = EventLog<Bool>()
        let op = AsyncBlockOp<Int> {
            started.append(true)
            try await Task.sleep(for: .seconds(60))
            return 1
        }
        OpQueue().addOperation(op)
        let waiter = Task { try await (op as Op).value(as: Int.self, cancellingOnTaskCancellation: true) }
        try #require(await eventuallyAsync { started.count == 1 }, "the operation never started")

        waiter.cancel()
        let result = await waiter.result

        #expect(throws: CancellationError.self) { try result.get() }
        #expect(op.isCancelled)
    }

    // MARK: A wrong type

    @Test func aWrongTypeThrowsAMismatchNamingBothTypesAndTheOperation() async throws {
        let op = ResultOp { 42 }
        op.name = "count rows"
        OpQueue().addOperation(op)

        let mismatch = try await #require(throws: OutputTypeMismatchError.self) {
            try await op.value(as: String.self)
        }
        #expect(mismatch.expectedType == "String")
        #expect(mismatch.actualType == "Int")
        #expect(mismatch.operation == op.description)
        let message = String(describing: mismatch)
        #expect(message.contains("count rows"), "\(message)")
        #expect(message.contains("produces Int, not String"), "\(message)")
        #expect(message.contains("Ask for Int.self"), "\(message)")
    }

    @Test func aWrongTypeIsReportedEvenWhenTheOperationFailed() async {
        let op = ResultOp<Int> { throw Failure(code: 3) }
        OpQueue().addOperation(op)
        await #expect(throws: OutputTypeMismatchError.self) { try await op.value(as: String.self) }
        // Neither a supertype nor an optional of the output type is the output type.
        await #expect(throws: OutputTypeMismatchError.self) { try await op.value(as: Int?.self) }
    }

    @Test func typesOfOneNameAreToldApartByTheirModule() async throws {
        let op = ResultOp { Cache.Entry() }
        OpQueue().addOperation(op)
        let mismatch = try await #require(throws: OutputTypeMismatchError.self) {
            try await op.value(as: Network.Entry.self)
        }
        let (expected, actual) = (mismatch.expectedType, mismatch.actualType ?? "")
        #expect(expected != actual)
        #expect(expected.hasSuffix("Network.Entry"), "\(expected)")
        #expect(actual.hasSuffix("Cache.Entry"), "\(actual)")
    }

    // MARK: No output

    @Test func anOperationWithNoOutputHasTheValueVoid() async throws {
        let runs = EventLog<Int>()
        let op: Op = BlockOp { runs.append(1) }
        OpQueue().addOperation(op)

        try await op.value(as: Void.self)
        #expect(runs.count == 1)
    }

    @Test func anOperationWithNoOutputThrowsItsFailureForVoid() async {
        let op: Op = BlockOp { Op.current?.cancel(with: Failure(code: 4)) }
        OpQueue().addOperation(op)
        await #expect(throws: Failure(code: 4)) { try await op.value(as: Void.self) }
    }

    @Test func anOperationWithNoOutputAskedForATypeThrowsAMismatch() async throws {
        let op = BlockOp {}
        op.name = "tidy up"
        OpQueue().addOperation(op)

        let mismatch = try await #require(throws: OutputTypeMismatchError.self) {
            try await op.value(as: Int.self)
        }
        #expect(mismatch.expectedType == "Int")
        #expect(mismatch.actualType == nil)
        let message = String(describing: mismatch)
        #expect(message.contains("tidy up"), "\(message)")
        #expect(message.contains("produces no output"), "\(message)")
        #expect(message.contains("Void.self"), "\(message)")
    }

    // MARK: An untyped RetryOp

    @Test func anUntypedRetryGivesItsSucceededAttemptsValue() async throws {
        let retry = RetryOp(maxAttempts: 3) { attempt in
            ResultOp<Int> {
                if attempt < 2 { throw Failure(code: attempt) }
                return attempt * 100
            }
        }
        OpQueue().addOperation(retry)
        #expect(try await retry.value(as: Int.self) == 200)
    }

    @Test func anUntypedRetryAskedForAnotherTypeNamesTheAttemptsType() async throws {
        let retry = RetryOp(maxAttempts: 2) { _ in AsyncBlockOp { "text" } }
        OpQueue().addOperation(retry)
        let mismatch = try await #require(throws: OutputTypeMismatchError.self) {
            try await retry.value(as: Int.self)
        }
        #expect(mismatch.actualType == "String")
        #expect(mismatch.expectedType == "Int")
        #expect(mismatch.operation == retry.description)
    }

    @Test func anUntypedRetryThatFailedThrowsTheLastErrorOrAMismatch() async {
        let retry = RetryOp(maxAttempts: 2) { attempt in
            ResultOp<Int> { throw Failure(code: attempt) }
        }
        OpQueue().addOperation(retry)
        await #expect(throws: Failure(code: 2)) { try await retry.value(as: Int.self) }
        // The latest attempt tells the type even though none succeeded.
        await #expect(throws: OutputTypeMismatchError.self) { try await retry.value(as: String.self) }
    }

    @Test func anUntypedRetryOfOperationsWithNoOutputHasTheValueVoid() async throws {
        let retry = RetryOp(maxAttempts: 2) { _ in BlockOp {} }
        OpQueue().addOperation(retry)
        try await retry.value(as: Void.self)
        await #expect(throws: OutputTypeMismatchError.self) { try await retry.value(as: Int.self) }
    }
}
