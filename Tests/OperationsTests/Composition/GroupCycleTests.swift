import Testing
import Dispatch
@testable import Operations

/// Cycle searches see through groups: a group waits for its children, so a child that waits
/// (through other operations) for its own group closes a loop.
@Suite struct GroupCycleTests {
    @Test func aWaitForAGroupEndsACycleThroughOneOfItsChildren() {
        let token = uniqueToken("group-cycle")
        let recorder = DiagnosticsRecorder.shared
        let ran = EventLog<String>()
        let child = BlockOp { ran.append("child") }
        child.name = "\(token)-child"
        let group = GroupOp(operations: [child])
        group.name = "\(token)-group"
        let outside = BlockOp { ran.append("outside") }
        outside.name = "\(token)-outside"
        outside.addDependency(group)
        child.addDependency(outside)   // child → outside → group → child
        let queue = OpQueue()
        queue.addOperations([group, outside], waitUntilFinished: false)
        group.waitUntilFinished()
        #expect(ran.all.isEmpty)
        #expect(child.error is DependencyCycleError)
        #expect(outside.error is DependencyCycleError)
        #expect(group.isFinished)
        #expect(!recorder.cyclesEnded(mentioning: token).isEmpty)
        #expect(queueEmpties(queue))
    }

    @Test func aChildThatDependsOnItsOwnGroupIsEndedWhenTheGroupIsAwaited() {
        let token = uniqueToken("self-group")
        let recorder = DiagnosticsRecorder.shared
        let child = BlockOp {}
        child.name = "\(token)-child"
        let group = GroupOp(operations: [child])
        group.name = "\(token)-group"
        child.addDependency(group)
        OpQueue().addOperation(group)
        group.waitUntilFinished()
        #expect(child.error is DependencyCycleError)
        let ended = recorder.cyclesEnded(mentioning: token)
        #expect(ended.first?.operations.count == 2)
    }

    @Test func aNewEdgeThatClosesACycleThroughARunningGroupIsReportedAtOnce() {
        let token = uniqueToken("edge-through-group")
        let recorder = DiagnosticsRecorder.shared
        let hold = Gate()
        let started = Gate()
        let blocker = BlockOp { started.open(); _ = hold.wait() }
        blocker.name = "\(token)-blocker"
        let child = BlockOp {}
        child.name = "\(token)-child"
        child.addDependency(blocker)
        let group = GroupOp(operations: [blocker, child])
        group.name = "\(token)-group"
        let outside = BlockOp {}
        outside.name = "\(token)-outside"
        outside.addDependency(group)
        OpQueue().addOperation(group)
        #expect(started.wait())
        child.addDependency(outside)   // child → outside → group (running) → child
        #expect(!recorder.cyclesFound(mentioning: token).isEmpty)
        // Breaking it by hand lets everything run: the cancelled child ignores its dependencies.
        child.cancel()
        hold.open()
        OpQueue().addOperation(outside)
        outside.waitUntilFinished()
        #expect(group.isFinished && !outside.isCancelled)
    }

    @Test func aGroupAndAChildThatDependsOnItAreReleasedOnceTheCycleEnded() {
        weak var weakGroup: GroupOp?
        weak var weakChild: Op?
        let queue = OpQueue()
        do {
            let child = BlockOp {}
            let group = GroupOp(operations: [child])
            child.addDependency(group)   // child → group (a dependency), group → child (a child)
            weakGroup = group
            weakChild = child
            queue.addOperation(group)
            group.waitUntilFinished()
            #expect(group.children.isEmpty)   // a finished group holds none of its children
        }
        #expect(eventually { weakGroup == nil && weakChild == nil })
    }

    @Test func childrenThatNothingElseHoldsAreReleasedOnceTheGroupFinished() {
        weak var weakChild: Op?
        let group: GroupOp
        do {
            let child = BlockOp {}
            weakChild = child
            group = GroupOp(operations: [child, BlockOp {}])
        }
        #expect(weakChild != nil)   // held by the group until it finishes
        OpQueue().addOperation(group)
        group.waitUntilFinished()
        #expect(eventually { weakChild == nil })
        #expect(group.progress.completedUnitCount == 2 && group.progress.fractionCompleted == 1)
    }
}
