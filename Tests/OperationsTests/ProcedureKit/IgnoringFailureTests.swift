import Testing
@testable import Operations

private struct Unreachable: Error {}

/// `OpCondition.ignoringFailure(_:)`: a failure that skips the operation (cancelled, no error)
/// instead of failing it.
@Suite struct IgnoringFailureTests {
    @Test func aSkippedOperationIsCancelledWithNoErrorAndDoesNotRun() async {
        let log = EventLog<String>()
        let op = BlockOp { log.append("body") }
        op.addCondition(.ignoringFailure(.predicate("online") { _ in false }))
        op.addObserver(BlockObserver(didCancel: { _, error in log.append("didCancel \(error == nil ? "nil" : "error")") }))
        await OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(op.isFinished && op.isCancelled)
        #expect(op.error == nil)
        #expect(log.all == ["didCancel nil"])
    }

    @Test func itsDependentsSeeACancellationNotAFailure() async {
        let skipped = BlockOp {}
        skipped.addCondition(.ignoringFailure(.predicate("needed") { _ in false }))
        let afterFailures = BlockOp {}
        afterFailures.addDependency(skipped)
        afterFailures.addCondition(.noFailedDependencies)
        let afterCancellations = BlockOp {}
        afterCancellations.addDependency(skipped)
        afterCancellations.addCondition(.noCancelledDependencies)
        await OpQueue().addOperations([skipped, afterFailures, afterCancellations], waitUntilFinished: true)
        #expect(!afterFailures.isCancelled)
        #expect(afterCancellations.isCancelled)
        #expect((afterCancellations.error as? ConditionFailedError)?.condition == "noCancelledDependencies")
    }

    @Test func anotherFailedConditionStillFailsTheOperation() async {
        let op = BlockOp {}
        op.addCondition(.predicate("allowed") { _ in false })
        op.addCondition(.ignoringFailure(.predicate("online") { _ in false }))
        await OpQueue().addOperations([op], waitUntilFinished: true)
        #expect((op.error as? ConditionFailedError)?.condition == "allowed", "the first to fail decides")
        let skippedFirst = BlockOp {}
        skippedFirst.addCondition(.ignoringFailure(.predicate("online") { _ in false }))
        skippedFirst.addCondition(.predicate("allowed") { _ in false })
        await OpQueue().addOperations([skippedFirst], waitUntilFinished: true)
        #expect(skippedFirst.isCancelled && skippedFirst.error == nil)
    }

    @Test func insideAllItSkipsAndInsideAnyItFails() async {
        let inAll = BlockOp {}
        inAll.addCondition(.all([.predicate("yes") { _ in true }, .ignoringFailure(.predicate("online") { _ in false })]))
        let inAny = BlockOp {}
        inAny.addCondition(.any([.ignoringFailure(.predicate("online") { _ in false }), .predicate("no") { _ in false }]))
        await OpQueue().addOperations([inAll, inAny], waitUntilFinished: true)
        #expect(inAll.isCancelled && inAll.error == nil)
        #expect(inAny.isCancelled && inAny.error is ConditionFailedError)
    }

    @Test func anAsyncCheckThatThrowsSkipsTheOperation() async {
        let op = AsyncBlockOp<Int> { 1 }
        op.addCondition(.ignoringFailure(.evaluate("reachable") { _ in throw Unreachable() }))
        await OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(op.isCancelled && op.error == nil)
        await #expect(throws: CancellationError.self) { try await op.value }
    }

    @Test func anOperationStartedByHandIsSkippedToo() async {
        let ran = EventLog<String>()
        let op = BlockOp { ran.append("body") }
        op.addCondition(.ignoringFailure(.predicate("online") { _ in false }))
        await onOwnThread { op.start() }
        #expect(op.isFinished && op.isCancelled && op.error == nil)
        #expect(ran.count == 0)
    }

    @Test func itAsksForTheCategoriesItWraps() async {
        let category = uniqueToken("wrapped")
        let holder = LimitHolder(.ignoringFailure(.mutuallyExclusive(category)))
        #expect(await holder.run(on: OpQueue()))
        #expect(Exclusivity.holders(of: category).map(ObjectIdentifier.init) == [ObjectIdentifier(holder.op)])
        holder.release.open()
        #expect(await eventuallyAsync { holder.op.isFinished })
    }
}
