import Testing
@testable import Operations

/// Inside a group's child, `OpQueue.current` is the group's queue of children, and what is added
/// to it becomes a child of the group, counted exactly (issue 22, defect 13: such an operation was
/// not counted, so the group could finish before it, yet its leaving counted down the group's
/// unfinished children).
@Suite struct GroupCurrentQueueTests {
    @Test func anOperationAddedToTheCurrentQueueFromAChildIsAChildOfTheGroup() {
        let log = EventLog<String>()
        let release = Gate()
        let late = RecordingOp(name: "late") { _ in
            release.wait()
            log.append("late")
        }
        let adder = RecordingOp(name: "adder") { _ in
            OpQueue.current?.addOperation(late)
            log.append("adder")
        }
        let group = GroupOp(operations: [adder])
        group.completionBlock = { log.append("group completion") }
        OpQueue().addOperation(group)

        #expect(eventually { adder.isFinished })
        #expect(late.group === group)
        #expect(group.children.contains { $0 === late })
        #expect(!group.isFinished)
        release.open()
        group.waitUntilFinished()
        #expect(late.isFinished)
        #expect(log.all == ["adder", "late", "group completion"])
    }

    @Test func operationsAndBlocksAddedToTheCurrentQueueFromAChildAreAllAwaited() {
        let log = EventLog<String>()
        let release = Gate()
        let held = RecordingOp(name: "held") { _ in
            release.wait()
            log.append("held")
        }
        let adder = RecordingOp(name: "adder") { _ in
            let queue = OpQueue.current
            queue?.addOperations([held, RecordingOp { _ in log.append("second") }], waitUntilFinished: false)
            queue?.addOperation { log.append("block") }
            queue?.addBarrierBlock { log.append("barrier") }
        }
        let group = GroupOp(operations: [adder])
        group.completionBlock = { log.append("group completion") }
        OpQueue().addOperation(group)

        // Once the adder returned: "block" may run before the adder adds the barrier.
        #expect(eventually { adder.isFinished && log.all.contains("second") && log.all.contains("block") })
        #expect(!group.isFinished)
        #expect(group.childCount == 5)
        release.open()
        group.waitUntilFinished()
        // The barrier waits for every child added before it; the group for every child.
        #expect(Array(log.all.suffix(3)) == ["held", "barrier", "group completion"])
        #expect(group.finishedChildCount == 5)
    }

    @Test func anAsyncAdditionToTheCurrentQueueFromAChildIsAChildOfTheGroup() async {
        let release = Gate()
        let late = RecordingOp(name: "late") { _ in release.wait() }
        let group = GroupOp()
        let adder = AsyncOp {
            await OpQueue.current?.addOperations([late], waitUntilFinished: false)
        }
        group.addChild(adder)
        OpQueue().addOperation(group)
        #expect(await eventuallyAsync { adder.isFinished })
        #expect(late.group === group)
        #expect(!group.isFinished)
        release.open()
        await group.waitUntilFinished()
        #expect(late.isFinished)
    }

    @Test(.oneExitTestAtATime) func addingToTheQueueOfAFinishedGroupTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let kept = LockedBox<OpQueue?>(nil)
            let group = GroupOp(operations: [BlockOp { kept.withLockedValue { $0 = OpQueue.current } }])
            OpQueue().addOperation(group)
            await group.waitUntilFinished()
            let late = BlockOp {}
            late.name = "too-late"
            kept.withLockedValue { $0 }?.addOperation(late)
        }
        expectStandardError(of: result, toContain: ["\"too-late\"", "queue of a group's children", "after the group finished"])
    }
}
