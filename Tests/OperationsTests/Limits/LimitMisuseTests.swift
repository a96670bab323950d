import Testing
import Dispatch
@testable import Operations

/// Declarations of one category that disagree are programmer errors: they trap with a message
/// naming the category and both declarations.
@Suite struct LimitMisuseTests {
    @Test(.oneExitTestAtATime) func aCategoryDeclaredWithOtherPermitsWhileInUseTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let holder = LimitHolder(.limited("db", permits: 2))
            OpQueue().addOperation(holder.op)
            holder.started.wait()
            OpQueue().addOperation(conditioned(.limited("db", permits: 3)))
            blockThread(milliseconds: 5_000)
        }
        expectStandardError(of: result, toContain: ["\"db\"", "limited(permits: 2)", "limited(permits: 3)", "same permits"])
    }

    @Test(.oneExitTestAtATime) func limitedWithTwoPermitsAndMutuallyExclusiveOnOneCategoryTrap() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let holder = LimitHolder(.limited("disk", permits: 2))
            OpQueue().addOperation(holder.op)
            holder.started.wait()
            OpQueue().addOperation(conditioned(.mutuallyExclusive("disk")))
            blockThread(milliseconds: 5_000)
        }
        expectStandardError(of: result, toContain: ["\"disk\"", "limited(permits: 2)", "limited(permits: 1)"])
    }

    @Test(.oneExitTestAtATime) func mutuallyExclusiveThenLimitedWithTwoPermitsOnOneCategoryTrap() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let holder = LimitHolder(.mutuallyExclusive("disk"))
            OpQueue().addOperation(holder.op)
            holder.started.wait()
            OpQueue().addOperation(conditioned(.limited("disk", permits: 2)))
            blockThread(milliseconds: 5_000)
        }
        expectStandardError(of: result, toContain: ["\"disk\"", "limited(permits: 1)", "limited(permits: 2)"])
    }

    @Test(.oneExitTestAtATime) func aRateLimitDeclaredWithAnotherIntervalTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let first = BlockOp {}
            first.addCondition(.rateLimited("api", permits: 5, per: .seconds(1)))
            first.start()
            let second = BlockOp {}
            second.addCondition(.rateLimited("api", permits: 5, per: .seconds(2)))
            second.start()
        }
        expectStandardError(of: result, toContain: ["\"api\"", "rateLimited(permits: 5, per: 1.0 seconds)", "rateLimited(permits: 5, per: 2.0 seconds)"])
    }

    @Test(.oneExitTestAtATime) func aLimitWithoutPermitsTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = OpCondition.limited("none", permits: 0)
        }
        expectStandardError(of: result, toContain: ["limited(\"none\", permits: 0)", "must be positive"])
    }

    @Test(.oneExitTestAtATime) func aLimitInsideAnyTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            BlockOp {}.addCondition(.any([.limited("pool", permits: 2), .noFailedDependencies]))
        }
        expectStandardError(of: result, toContain: ["limited(pool, permits: 2)", ".limited"])
    }

    @Test func aCategoryIsForgottenOnceUnusedAndMayBeDeclaredAgain() async {
        let category = uniqueToken("again")
        let first = conditioned(.limited(category, permits: 2))
        await onOwnThread { first.start() }
        #expect(!Exclusivity.keepsCountedCategory(category))
        let second = conditioned(.limited(category, permits: 3))
        await onOwnThread { second.start() }
        let third = conditioned(.mutuallyExclusive(category))
        await onOwnThread { third.start() }
        #expect(first.isFinished && second.isFinished && third.isFinished)
    }
}
