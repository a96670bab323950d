import Testing
@testable import Operations

/// One outcome for a cancelled operation that produces output: cancellation wins. Once it reads
/// as cancelled, `value`, `output` and `map` all give the failure (its error, or
/// `CancellationError`), even if the body returned a value anyway.
@Suite struct CancelledOutcomeTests {
    /// Cancels the operation from its own body, then returns 42 anyway.
    private static func cancelledAfterReturning(_ error: (any Error)? = nil) -> AsyncBlockOp<Int> {
        AsyncBlockOp<Int> {
            let op = Op.current!
            if let error { op.cancel(with: error) } else { op.cancel() }
            return 42
        }
    }

    @Test func valueOutputAndMapAgreeAfterACancelWhileTheBodyRan() async {
        let op = Self.cancelledAfterReturning()
        let mapped = op.map { $0 + 1 }
        await OpQueue().addOperations([op, mapped], waitUntilFinished: true)

        #expect(op.isCancelled)
        var valueError: (any Error)?
        do { _ = try await op.value } catch { valueError = error }
        #expect(valueError is CancellationError, "value gave \(String(describing: valueError))")
        guard case .failure(let outputError)? = op.output else {
            Issue.record("output is \(String(describing: op.output))")
            return
        }
        #expect(outputError is CancellationError)
        guard case .failure(let mappedError)? = mapped.output else {
            Issue.record("mapped output is \(String(describing: mapped.output))")
            return
        }
        #expect(mappedError is CancellationError)
    }

    @Test func aCancellationErrorIsWhatValueAndOutputThrow() async {
        struct Stopped: Error {}
        let op = Self.cancelledAfterReturning(Stopped())
        await OpQueue().addOperations([op], waitUntilFinished: true)

        var valueError: (any Error)?
        do { _ = try await op.value(cancellingOnTaskCancellation: false) } catch { valueError = error }
        #expect(valueError is Stopped)
        guard case .failure(let outputError)? = op.output else {
            Issue.record("output is \(String(describing: op.output))")
            return
        }
        #expect(outputError is Stopped)
    }

    @Test func anOperationThatWasNotCancelledKeepsItsValue() async throws {
        let op = AsyncBlockOp { 42 }
        await OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(try await op.value == 42)
        #expect(try op.output?.get() == 42)
    }
}
