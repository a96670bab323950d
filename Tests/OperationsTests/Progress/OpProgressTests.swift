import Testing
import Dispatch
@testable import Operations

/// `OpProgress`: an operation's own units (or one unit, complete when it finishes), a group's
/// progress rolled up from its children, and a queue's progress counting the operations that leave
/// it and, fractionally, the running ones that report units.
@Suite struct OpProgressTests {
    // MARK: An operation's progress

    @Test func operationThatSetsNothingGoesFromZeroToOneWhenItFinishes() async {
        let op = BlockOp {}
        let progress = op.progress
        #expect(progress.fractionCompleted == 0)
        #expect(!progress.isFinished)

        OpQueue().addOperation(op)
        await op.waitUntilFinished()

        #expect(progress.fractionCompleted == 1)
        #expect(progress.isFinished)
        #expect(op.progress === progress)
    }

    @Test func syncMainReportsItsUnitsAsItGoes() async {
        let midway = Gate()
        let resume = Gate()
        let op = RecordingOp { op in
            op.progress.totalUnitCount = 4
            op.progress.completedUnitCount = 2
            midway.open()
            resume.wait()
            op.progress.completedUnitCount = 4
        }
        OpQueue().addOperation(op)
        #expect(await midway.waitOffThread())

        #expect(op.progress.totalUnitCount == 4)
        #expect(op.progress.completedUnitCount == 2)
        #expect(op.progress.fractionCompleted == 0.5)
        #expect(!op.progress.isFinished)
        #expect(op.progress.description == "2 of 4")

        resume.open()
        await op.waitUntilFinished()
        #expect(op.progress.fractionCompleted == 1)
        #expect(op.progress.description == "4 of 4")
    }

    @Test func asyncBodyReportsThroughTheCurrentOperation() async {
        let midway = Gate()
        let resume = Gate()
        let seenInBody = LockedBox<OpProgress?>(nil)
        let op = AsyncOp {
            let progress = Op.current!.progress
            seenInBody.withLockedValue { $0 = progress }
            progress.totalUnitCount = 10
            progress.completedUnitCount = 3
            midway.open()
            await resume.waitOffThread()
            progress.completedUnitCount = 10
        }
        OpQueue().addOperation(op)
        #expect(await midway.waitOffThread())

        #expect(seenInBody.withLockedValue { $0 } === op.progress)
        #expect(op.progress.fractionCompleted == 0.3)
        #expect(!op.progress.isFinished)

        resume.open()
        await op.waitUntilFinished()
        #expect(op.progress.fractionCompleted == 1)
        #expect(op.progress.isFinished)
    }

    @Test func progressFirstAskedForAfterTheFinishReadsOne() async {
        let op = BlockOp {}
        OpQueue().addOperation(op)
        await op.waitUntilFinished()

        #expect(op.progress.fractionCompleted == 1)
        #expect(op.progress.isFinished)
    }

    @Test func cancelledOperationsProgressReadsOneOnceFinished() async {
        // Cancelled before it started.
        let neverRan = BlockOp {}
        let neverRanProgress = neverRan.progress
        neverRan.cancel()
        OpQueue().addOperation(neverRan)
        await neverRan.waitUntilFinished()
        #expect(neverRanProgress.fractionCompleted == 1)

        // Cancelled while running, a quarter done.
        let midway = Gate()
        let op = RecordingOp { op in
            op.progress.totalUnitCount = 4
            op.progress.completedUnitCount = 1
            midway.open()
            let giveUp = ContinuousClock.now + .seconds(30)
            while !op.isCancelled, ContinuousClock.now < giveUp {
                blockThread(milliseconds: 1)
            }
        }
        OpQueue().addOperation(op)
        #expect(await midway.waitOffThread())
        #expect(op.progress.fractionCompleted == 0.25)
        op.cancel()
        await op.waitUntilFinished()
        #expect(op.isCancelled)
        #expect(op.progress.fractionCompleted == 1)
        #expect(op.progress.isFinished)
    }

    // MARK: A group's progress

    @Test func groupOfAsyncChildrenReachesOne() async {
        let children = (0..<4).map { index in
            AsyncOp {
                let progress = Op.current!.progress
                progress.totalUnitCount = 2
                try await Task.sleep(for: .milliseconds(10 * index))
                progress.completedUnitCount = 1
                try await Task.sleep(for: .milliseconds(10))
                progress.completedUnitCount = 2
            }
        }
        let group = GroupOp(operations: children)
        let progress = group.progress
        #expect(progress.totalUnitCount == 4)
        #expect(progress.completedUnitCount == 0)
        #expect(progress.fractionCompleted == 0)

        OpQueue().addOperation(group)
        await group.waitUntilFinished()

        #expect(group.error == nil)
        #expect(progress.fractionCompleted == 1.0)
        #expect(progress.isFinished)
        #expect(progress.completedUnitCount == 4)
        #expect(progress.totalUnitCount == 4)
    }

    @Test func groupCountsARunningChildByItsOwnFraction() async {
        let midway = Gate()
        let resume = Gate()
        let quick = BlockOp {}
        let halfway = AsyncOp {
            let progress = Op.current!.progress
            progress.totalUnitCount = 2
            progress.completedUnitCount = 1
            midway.open()
            await resume.waitOffThread()
            progress.completedUnitCount = 2
        }
        let group = GroupOp(operations: [quick, halfway])
        OpQueue().addOperation(group)
        #expect(await midway.waitOffThread())
        await quick.waitUntilFinished()

        // One child done (1) and one at 50 % (0.5), of two.
        #expect(group.progress.totalUnitCount == 2)
        #expect(group.progress.completedUnitCount == 1)
        #expect(group.progress.fractionCompleted == 0.75)
        #expect(group.progress.description == "1 of 2")

        resume.open()
        await group.waitUntilFinished()
        #expect(group.progress.fractionCompleted == 1)
        #expect(group.progress.completedUnitCount == 2)
    }

    @Test func nestedGroupsRollUp() async {
        let midway = Gate()
        let resume = Gate()
        let innerDone = BlockOp {}
        let innerHalfway = AsyncOp {
            let progress = Op.current!.progress
            progress.totalUnitCount = 2
            progress.completedUnitCount = 1
            midway.open()
            await resume.waitOffThread()
        }
        let inner = GroupOp(operations: [innerDone, innerHalfway])
        let outerDone = BlockOp {}
        let outer = GroupOp(operations: [inner, outerDone])
        OpQueue().addOperation(outer)
        #expect(await midway.waitOffThread())
        await innerDone.waitUntilFinished()
        await outerDone.waitUntilFinished()

        // Inner: (1 + 0.5) / 2 = 0.75; outer: (0.75 + 1) / 2 = 0.875.
        #expect(inner.progress.fractionCompleted == 0.75)
        #expect(outer.progress.fractionCompleted == 0.875)
        #expect(outer.progress.totalUnitCount == 2)
        #expect(outer.progress.completedUnitCount == 1)

        resume.open()
        await outer.waitUntilFinished()
        #expect(inner.progress.fractionCompleted == 1)
        #expect(outer.progress.fractionCompleted == 1)
        #expect(outer.progress.completedUnitCount == 2)
    }

    @Test(.oneExitTestAtATime) func settingTheTotalOfAGroupsProgressTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let group = GroupOp(operations: [BlockOp {}])
            group.name = "rollup"
            group.progress.totalUnitCount = 5
        }
        expectStandardError(of: result, toContain: ["totalUnitCount", "\"rollup\"", "derived from its children"])
    }

    @Test(.oneExitTestAtATime) func settingTheCompletedCountOfAGroupsProgressTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let group = GroupOp(operations: [BlockOp {}])
            group.name = "rollup"
            group.progress.completedUnitCount = 1
        }
        expectStandardError(of: result, toContain: ["completedUnitCount", "\"rollup\"", "derived from its children"])
    }

    // MARK: A queue's progress

    @Test func queueProgressDoesNotReportUntilItsTotalIsSet() async {
        let queue = OpQueue()
        await queue.addOperations([BlockOp {}, BlockOp {}, BlockOp {}], waitUntilFinished: true)
        #expect(queue.progress.completedUnitCount == 0)
        #expect(queue.progress.totalUnitCount == 0)
        #expect(queue.progress.fractionCompleted == 0)

        queue.progress.totalUnitCount = 2
        await queue.addOperations([BlockOp {}, BlockOp {}], waitUntilFinished: true)
        #expect(queue.progress.completedUnitCount == 2)
        #expect(queue.progress.fractionCompleted == 1)
        #expect(queue.progress.isFinished)
    }

    @Test func queueProgressCountsEachOperationThatLeaves() async {
        let queue = OpQueue()
        queue.progress.totalUnitCount = 4
        queue.isSuspended = true
        let ops = (0..<3).map { _ in BlockOp {} }
        await queue.addOperations(ops, waitUntilFinished: false)
        #expect(queue.progress.completedUnitCount == 0)
        #expect(queue.progress.description == "0 of 4")

        queue.isSuspended = false
        await queue.waitUntilAllOperationsAreFinished()
        #expect(queue.progress.completedUnitCount == 3)
        #expect(queue.progress.fractionCompleted == 0.75)
        #expect(!queue.progress.isFinished)
        #expect(queue.progress.description == "3 of 4")
    }

    @Test func queueProgressDoesNotCountRunningOperationsThatReportNothing() async {
        let queue = OpQueue()
        queue.progress.totalUnitCount = 2
        let release = Gate()
        let done = BlockOp {}
        let running = BlockOp { release.wait() }
        await queue.addOperations([done, running], waitUntilFinished: false)
        #expect(await eventuallyAsync { queue.progress.completedUnitCount == 1 && running.isExecuting })

        #expect(queue.progress.fractionCompleted == 0.5)

        release.open()
        await queue.waitUntilAllOperationsAreFinished()
        #expect(queue.progress.fractionCompleted == 1)
    }

    @Test func queueProgressCountsARunningOperationByItsFraction() async {
        let queue = OpQueue()
        queue.progress.totalUnitCount = 2
        let midway = Gate()
        let resume = Gate()
        let done = BlockOp {}
        let halfway = RecordingOp { op in
            op.progress.totalUnitCount = 2
            op.progress.completedUnitCount = 1
            midway.open()
            resume.wait()
            op.progress.completedUnitCount = 2
        }
        await queue.addOperations([done, halfway], waitUntilFinished: false)
        #expect(await midway.waitOffThread())
        #expect(await eventuallyAsync { queue.progress.completedUnitCount == 1 })

        // One left (1) and one running at 50 % (0.5), of two.
        #expect(queue.progress.fractionCompleted == 0.75)
        #expect(queue.progress.description == "1 of 2")

        resume.open()
        await queue.waitUntilAllOperationsAreFinished()
        #expect(queue.progress.completedUnitCount == 2)
        #expect(queue.progress.fractionCompleted == 1)
    }

    @Test func runningGroupCountsByItsFractionInAReportingQueue() async {
        let queue = OpQueue()
        queue.progress.totalUnitCount = 1
        let release = Gate()
        let done = BlockOp {}
        let blocked = BlockOp { release.wait() }
        let group = GroupOp(operations: [done, blocked])
        queue.addOperation(group)
        #expect(await eventuallyAsync { done.isFinished && blocked.isExecuting })

        // The group is at (1 + 0) / 2; the queue counts it so, though it has not left.
        #expect(group.progress.fractionCompleted == 0.5)
        #expect(queue.progress.completedUnitCount == 0)
        #expect(queue.progress.fractionCompleted == 0.5)

        release.open()
        await queue.waitUntilAllOperationsAreFinished()
        #expect(queue.progress.completedUnitCount == 1)
        #expect(queue.progress.fractionCompleted == 1)
    }

    // MARK: Description

    @Test func descriptionIsCompletedOfTotal() {
        let op = BlockOp {}
        #expect(op.progress.description == "0 of 0")
        op.progress.totalUnitCount = 10
        op.progress.completedUnitCount = 3
        #expect(op.progress.description == "3 of 10")

        let group = GroupOp(operations: [BlockOp {}, BlockOp {}])
        #expect(group.progress.description == "0 of 2")

        let queue = OpQueue()
        queue.progress.totalUnitCount = 7
        #expect(queue.progress.description == "0 of 7")
    }

    @Test func aGroupsProgressKeepsItsFinalCountsAfterTheGroupIsReleased() {
        var group: GroupOp? = GroupOp(operations: [BlockOp {}, BlockOp {}, BlockOp {}])
        let progress = group!.progress
        group!.start()
        group!.waitUntilFinished()
        weak let released = group
        group = nil
        // The thread that finished it may hold it a moment longer.
        #expect(eventually { released == nil })
        #expect(progress.fractionCompleted == 1 && progress.isFinished)
        #expect(progress.completedUnitCount == 3 && progress.totalUnitCount == 3)
    }
}
