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
        // The first child holds the group running until the test lets it go (an hour at most: a
        // group that finished before the next child is added would make that addition a misuse).
        group.addChild(BlockOp { started.open(); hold.wait(seconds: 3_600) })
        let child = BlockOp {}
        child.name = "\(token)-child"
        // Driven from a thread of its own, so that a crowded cooperative pool cannot delay it.
        let cyclesFound: Int? = await onOwnThread { [recorder] in
            OpQueue().addOperations([group], waitUntilFinished: false)
            guard started.wait() else { hold.open(); return nil }
            let blocker = BlockOp {}
            child.addDependency(blocker)   // keeps it pending while the cycle is closed
            group.addChild(child)
            child.addDependency(group)   // forward: child → group (running) → child
            let found = recorder.cyclesFound(mentioning: token).count
            child.removeDependency(group)
            hold.open()
            blocker.start()
            group.waitUntilFinished()
            return found
        }
        #expect(cyclesFound == 1)
        #expect(child.isFinished && child.error == nil && !child.isCancelled)
    }
}
