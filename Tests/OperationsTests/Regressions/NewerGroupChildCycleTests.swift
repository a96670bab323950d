import Testing
import Dispatch
@testable import Operations

/// A child created after its group is a backward edge: the group, once executing, waits for a
/// newer operation. A cycle through it needs no other backward edge (the child may depend on its
/// own group), and a wait for it must still find and end the cycle, not hang.
@Suite struct NewerGroupChildCycleTests {
    let recorder = DiagnosticsRecorder.shared

    @Test func waitingForAGroupWhoseNewerChildDependsOnItEndsTheCycle() async {
        let token = uniqueToken("newer-child")
        let group = GroupOp()
        group.name = "\(token)-group"
        let child = BlockOp { Issue.record("a child on a cycle must not run") }
        child.name = "\(token)-child"
        group.addChild(child)
        child.addDependency(group)   // a forward edge: the group is older
        await OpQueue().addOperations([group], waitUntilFinished: false)
        let returned = Gate()
        DispatchQueue(label: "waiting for the group").async {
            group.waitUntilFinished()
            returned.open()
        }
        #expect(await returned.waitOffThread(seconds: 20), "the wait for the group never returned")
        #expect(child.error is DependencyCycleError)
        #expect(group.isFinished)
        #expect(recorder.cyclesEnded(mentioning: token).count == 1)
    }

    @Test func aNewerChildThatDependsOnItsRunningGroupClosesACycleReportedAtOnce() async {
        let token = uniqueToken("newer-child-running")
        let hold = Gate()
        let started = Gate()
        let group = GroupOp()
        group.name = "\(token)-group"
        group.addChild(BlockOp { started.open(); _ = hold.wait() })
        await OpQueue().addOperations([group], waitUntilFinished: false)
        #expect(await started.waitOffThread())
        let child = BlockOp {}
        child.name = "\(token)-child"
        let blocker = BlockOp {}
        child.addDependency(blocker)   // keeps it pending while the cycle is closed
        group.addChild(child)
        child.addDependency(group)   // forward: child → group (running) → child
        #expect(recorder.cyclesFound(mentioning: token).count == 1)
        child.removeDependency(group)
        hold.open()
        blocker.start()
        await group.waitUntilFinished()
        #expect(child.isFinished && child.error == nil && !child.isCancelled)
    }
}
