import Testing
@testable import Operations

/// A group that marks the thread that runs its `execute()`, around `super.execute()`, and opens
/// `returned` once `super.execute()` has returned.
private final class MarkingGroup: GroupOp, @unchecked Sendable {
    // @unchecked Sendable: the stored properties are immutable and thread-safe.
    let insideExecute: ThreadLocal<MarkingGroup>
    let returned = Gate()

    init(operations: [Op], insideExecute: ThreadLocal<MarkingGroup>) {
        self.insideExecute = insideExecute
        super.init(operations: operations)
    }

    override func execute() {
        insideExecute.withValue(self) {
            super.execute()
        }
        returned.open()
    }
}

/// `GroupOp.execute()` only hands the children to the group's queue: it returns at once, and no
/// child runs inside it (issue 22, defect 12: a group started on a worker of the pool ran its
/// children on that worker inside `execute()`, so a child that waited for the code after
/// `super.execute()` deadlocked).
@Suite struct GroupExecuteReturnsPromptlyTests {
    @Test func aChildCanWaitForTheCodeAfterSuperExecute() {
        let marker = ThreadLocal<MarkingGroup>()
        let sawTheReturn = EventLog<Bool>()
        let box = LockedBox<MarkingGroup?>(nil)
        let child = RecordingOp(name: "waits for the group's execute()") { _ in
            // The guard is short enough to fail fast, long enough for a loaded machine.
            sawTheReturn.append(box.withLockedValue { $0 }?.returned.wait(seconds: 10) ?? false)
        }
        let group = MarkingGroup(operations: [child], insideExecute: marker)
        box.withLockedValue { $0 = group }
        OpQueue().addOperation(group)
        group.waitUntilFinished()
        #expect(sawTheReturn.all == [true])
    }

    @Test func childrenNeverRunInsideTheExecuteOfTheirGroup() {
        let marker = ThreadLocal<MarkingGroup>()
        let insideTheirGroup = EventLog<Bool>()
        let queue = OpQueue()
        var groups: [MarkingGroup] = []
        for _ in 0..<40 {
            let box = LockedBox<MarkingGroup?>(nil)
            let children = (0..<5).map { _ in
                RecordingOp { _ in
                    let running = marker.value
                    insideTheirGroup.append(running != nil && running === box.withLockedValue { $0 })
                }
            }
            let group = MarkingGroup(operations: children, insideExecute: marker)
            box.withLockedValue { $0 = group }
            groups.append(group)
        }
        queue.addOperations(groups, waitUntilFinished: true)
        #expect(insideTheirGroup.count == 200)
        #expect(insideTheirGroup.all.filter { $0 }.isEmpty)
    }
}
