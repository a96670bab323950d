import Testing
@testable import Operations

/// `GroupOp.isSuspended`: a suspended group starts no new children; running ones go on.
@Suite struct GroupSuspensionTests {
    @Test func aSuspendedGroupStartsNoChildUntilItIsResumed() async {
        let log = EventLog<String>()
        let children = (0..<3).map { index in BlockOp { log.append("child \(index)") } }
        let group = GroupOp(operations: children)
        group.isSuspended = true
        #expect(group.isSuspended)
        let queue = OpQueue()
        queue.addOperation(group)
        #expect(await eventuallyAsync { group.isExecuting })
        try? await Task.sleep(for: .milliseconds(50))
        #expect(log.count == 0, "no child started while the group is suspended")
        #expect(!group.isFinished)
        group.isSuspended = false
        #expect(await eventuallyAsync { group.isFinished })
        #expect(Set(log.all) == ["child 0", "child 1", "child 2"])
    }

    @Test func aRunningChildGoesOnWhileTheGroupIsSuspended() async {
        let started = Gate()
        let release = Gate()
        let log = EventLog<String>()
        let running = BlockOp {
            started.open()
            release.wait()
            log.append("running finished")
        }
        let group = GroupOp(operations: [running])
        group.maxConcurrentOperationCount = 1
        OpQueue().addOperation(group)
        #expect(await started.waitOffThread())
        group.isSuspended = true
        let later = BlockOp { log.append("later") }
        group.addChild(later)
        release.open()
        #expect(await eventuallyAsync { running.isFinished })
        try? await Task.sleep(for: .milliseconds(50))
        #expect(log.all == ["running finished"], "the child added while suspended waits")
        group.isSuspended = false
        #expect(await eventuallyAsync { group.isFinished })
        #expect(log.all == ["running finished", "later"])
    }

    @Test func cancellingASuspendedGroupFinishesIt() async {
        let ran = EventLog<String>()
        let children = (0..<2).map { _ in BlockOp { ran.append("ran") } }
        let group = GroupOp(operations: children)
        group.isSuspended = true
        OpQueue().addOperation(group)
        #expect(await eventuallyAsync { group.isExecuting })
        group.cancel()
        #expect(await eventuallyAsync { group.isFinished })
        #expect(!group.isSuspended, "cancelling resumed it")
        #expect(children.allSatisfy { $0.isCancelled && $0.isFinished })
        #expect(ran.count == 0)
    }
}
