import Testing
@testable import Operations

private struct Offline: Error, Equatable {}

/// `OpCondition.evaluate(for:)` and what a condition asks for, readable: conditions can be unit
/// tested without a queue.
@Suite struct ConditionEvaluationTests {
    @Test func aPassingPredicatePassesAndAFailingOneFailsNamingIt() async {
        let op = BlockOp {}
        #expect(await OpCondition.predicate("yes") { _ in true }.evaluate(for: op).passed)
        let verdict = await OpCondition.predicate("signed in") { _ in false }.evaluate(for: op)
        guard case .failed(let failure) = verdict else {
            Issue.record("expected a failure, got \(verdict)")
            return
        }
        #expect(failure.condition == "signed in")
        #expect(!op.isCancelled && !op.isFinished, "evaluating changes nothing")
    }

    @Test func anAsyncCheckIsAwaitedAndItsErrorIsTheUnderlyingOne() async {
        let op = BlockOp {}
        let throwing = OpCondition.evaluate("reachable") { _ in
            await Task.yield()
            throw Offline()
        }
        let failure = await throwing.evaluate(for: op).failure
        #expect(failure?.condition == "reachable")
        #expect(failure?.underlyingError as? Offline == Offline())
        #expect(await OpCondition.evaluate("fine") { _ in true }.evaluate(for: op).passed)
    }

    @Test func checksOfDependenciesReadTheDependenciesAsTheyAreNow() async {
        let dependency = BlockOp {}
        let op = BlockOp {}
        op.addDependency(dependency)
        dependency.cancel()
        dependency.start()
        #expect(await OpCondition.noFailedDependencies.evaluate(for: op).passed)
        #expect(await OpCondition.noCancelledDependencies.evaluate(for: op).failure?.condition == "noCancelledDependencies")
        #expect(await OpCondition.dependency(dependency).evaluate(for: op).failure != nil)
    }

    @Test func categoriesAndPermitsPassWithoutBeingTaken() async {
        let op = BlockOp {}
        let category = uniqueToken("evaluate")
        #expect(await OpCondition.mutuallyExclusive(category).evaluate(for: op).passed)
        #expect(await OpCondition.limited(category + "-n", permits: 3).evaluate(for: op).passed)
        #expect(Exclusivity.holders(of: category).isEmpty)
        #expect(Exclusivity.permitsInUse(of: category + "-n") == 0)
    }

    @Test func anIgnoredFailureIsAVerdictOfItsOwn() async {
        let op = BlockOp {}
        let verdict = await OpCondition.ignoringFailure(.predicate("online") { _ in false }).evaluate(for: op)
        guard case .skipped(let failure) = verdict else {
            Issue.record("expected a skip, got \(verdict)")
            return
        }
        #expect(failure.condition == "online")
        #expect(await OpCondition.ignoringFailure(.predicate("online") { _ in true }).evaluate(for: op).passed)
        // Inside `not`, an ignored failure counts as any other: `not` passes.
        #expect(await OpCondition.not(.ignoringFailure(.predicate("online") { _ in false })).evaluate(for: op).passed)
    }

    @Test func whatAConditionAsksForIsReadable() {
        let first = BlockOp {}
        let second = BlockOp {}
        let condition = OpCondition.all([
            .mutuallyExclusive("disk"),
            .limited("db", permits: 4),
            .rateLimited("api", permits: 10, per: .seconds(1)),
            .dependency(first),
            .ignoringFailure(.dependency(second)),
            .limited("one", permits: 1),
        ])
        #expect(condition.exclusivityCategories == ["disk", "one"])
        #expect(condition.countedCategories == ["db", "api"])
        #expect(condition.dependencies.map(ObjectIdentifier.init) == [ObjectIdentifier(first), ObjectIdentifier(second)])
        #expect(OpCondition.noFailedDependencies.dependencies.isEmpty)
        #expect(OpCondition.not(.dependency(first)).dependencies.count == 1)
    }
}
