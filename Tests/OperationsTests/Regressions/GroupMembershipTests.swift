import Testing
@testable import Operations

/// "Child of a group" and "member of a queue" are one membership, checked at every way in: an
/// operation is in one queue or one group, once (issue 22, defect 16: `.dependency(x)` moved a
/// pending child `x` out of its group into a queue, and adding a child twice, or a group's pending
/// child to a queue, was accepted and trapped only later, on a worker, when the group started).
@Suite struct GroupMembershipTests {
    // MARK: A dependency condition on a group's child

    @Test func aDependencyConditionOnAChildOfAGroupThatHasNotStartedLeavesItInItsGroup() {
        let queue = OpQueue()
        let ranInItsGroup = EventLog<Bool>()
        let group = GroupOp()
        let permission = RecordingOp(name: "permission") { _ in
            ranInItsGroup.append(Op.current?.group === group && OpQueue.current !== queue)
        }
        group.addChild(permission)
        let work = RecordingOp(name: "work") { _ in }
        work.addCondition(.dependency(permission))
        queue.addOperation(work)
        #expect(permission.group === group)
        #expect(!queue.operations.contains { $0 === permission })

        queue.addOperation(group)
        work.waitUntilFinished()
        group.waitUntilFinished()
        #expect(ranInItsGroup.all == [true])
        #expect(!work.isCancelled)
        #expect(group.error == nil)
    }

    @Test func aDependencyConditionOnAChildOfAnotherGroupLeavesItInThatGroup() {
        let ranIn = EventLog<String>()
        let first = GroupOp()
        first.name = "first"
        let permission = RecordingOp(name: "permission") { _ in ranIn.append(Op.current?.group?.name ?? "none") }
        first.addChild(permission)
        let work = RecordingOp(name: "work") { _ in ranIn.append("work") }
        work.addCondition(.dependency(permission))
        let second = GroupOp(operations: [work])
        second.name = "second"
        let queue = OpQueue()
        queue.addOperations([second, first], waitUntilFinished: true)
        #expect(ranIn.all == ["first", "work"])
        #expect(permission.group === first && work.group === second)
        #expect(first.error == nil && second.error == nil)
    }

    @Test func aDependencyConditionBringsItsOperationIntoTheGroupAsItsChildJoins() {
        // Like a queue, a group takes the operation a child's `.dependency` names when the child
        // joins it, not when the group starts: another operation's condition added later finds it
        // in the group (found by the model-based test: it went to that operation's queue).
        let group = GroupOp()
        let ranIn = EventLog<String>()
        let permission = RecordingOp(name: "permission") { _ in ranIn.append(Op.current?.group === group ? "group" : "elsewhere") }
        let child = RecordingOp(name: "child") { _ in ranIn.append("child") }
        child.addCondition(.dependency(permission))
        group.addChild(child)
        #expect(permission.group === group)
        #expect(group.childCount == 2)

        let other = RecordingOp(name: "other") { _ in ranIn.append("other") }
        other.addCondition(.dependency(permission))
        let queue = OpQueue()
        queue.addOperation(other)
        #expect(!queue.operations.contains { $0 === permission })
        queue.addOperation(group)
        other.waitUntilFinished()
        group.waitUntilFinished()
        #expect(ranIn.all.first == "group")
        #expect(Set(ranIn.all) == ["group", "child", "other"])
        #expect(group.error == nil && !other.isCancelled)
    }

    // MARK: The membership state

    @Test func aChildJoinsOnlyItsGroupsQueueOfChildren() {
        let group = GroupOp()
        var machine = OpStateMachine()
        #expect(machine.membership.isFree)
        let joined = machine.join(group)
        #expect(joined == nil)
        #expect(machine.isGroupChild && machine.group === group && machine.queue == nil)
        let elsewhere = OpQueue()
        check(machine.enqueue(in: elsewhere) == .misuse(.enqueueGroupChild))
        #expect(machine.queue == nil)
        check(machine.enqueue(in: group.link.queue) == .schedule(OpStateMachine.Schedule(priority: .normal, ticket: 0)))
        #expect(machine.queue === group.link.queue && machine.group === group)
        if case .child(of: let current)? = machine.join(group) as OpStateMachine.JoinRefusal? {
            #expect(current === group)
        } else {
            Issue.record("a child joined its group twice")
        }
    }

    @Test func aQueueMemberCannotJoinAGroup() {
        let queue = OpQueue()
        var machine = OpStateMachine()
        check(machine.enqueue(in: queue) == .schedule(OpStateMachine.Schedule(priority: .normal, ticket: 0)))
        if case .inQueue(let found)? = machine.join(GroupOp()) {
            #expect(found === queue)
        } else {
            Issue.record("a queue member joined a group")
        }
        #expect(!machine.isGroupChild)
    }

    @Test func theMembershipKeepsTheMachineSmall() {
        #expect(MemoryLayout<OpStateMachine.Membership>.size == MemoryLayout<OpQueue?>.size)
        #expect(MemoryLayout<OpStateMachine>.size <= 29)
    }

    // MARK: Misuse, trapped where it happens

    @Test(.oneExitTestAtATime) func addingAChildTwiceTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let child = BlockOp {}
            child.name = "twice-added"
            let group = GroupOp()
            group.name = "adder-group"
            group.addChild(child)
            group.addChild(child)
        }
        expectStandardError(of: result, toContain: ["\"twice-added\"", "\"adder-group\"", "twice", "A child is added once"])
    }

    @Test(.oneExitTestAtATime) func aGroupMadeWithTheSameOperationTwiceTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let child = BlockOp {}
            child.name = "listed-twice"
            _ = GroupOp(operations: [child, child])
        }
        expectStandardError(of: result, toContain: ["\"listed-twice\"", "twice", "A child is added once"])
    }

    @Test(.oneExitTestAtATime) func addingAPendingChildToAQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let child = BlockOp {}
            child.name = "pending-child"
            let group = GroupOp(operations: [child])
            group.name = "its-group"
            OpQueue().addOperation(child)
        }
        expectStandardError(of: result, toContain: ["\"pending-child\"", "child of", "\"its-group\"", "add the group to the queue"])
    }

    @Test(.oneExitTestAtATime) func addingARunningGroupsChildToAnotherQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let release = Gate()
            let child = RecordingOp(name: "running-child") { _ in release.wait() }
            let waiting = BlockOp {}
            waiting.name = "waiting-child"
            waiting.addDependency(child)
            let group = GroupOp(operations: [child, waiting])
            group.name = "running-group"
            OpQueue().addOperation(group)
            _ = await eventuallyAsync { child.isExecuting }
            OpQueue().addOperation(waiting)
        }
        expectStandardError(of: result, toContain: ["\"waiting-child\"", "\"running-group\"", "add the group to the queue"])
    }

    @Test(.oneExitTestAtATime) func producingAChildOfAnotherGroupTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let owned = BlockOp {}
            owned.name = "owned-elsewhere"
            let owner = GroupOp(operations: [owned])
            owner.name = "owner-group"
            let producer = AsyncOp { Op.current?.produce(owned) }
            OpQueue().addOperation(producer)
            await producer.waitUntilFinished()
        }
        expectStandardError(of: result, toContain: ["\"owned-elsewhere\"", "\"owner-group\"", "add the group to the queue"])
    }

    @Test(.oneExitTestAtATime) func anAttemptThatIsAChildOfAGroupTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let owned = BlockOp {}
            owned.name = "owned-attempt"
            let owner = GroupOp(operations: [owned])
            owner.name = "attempt-owner"
            let retry = RetryOp(maxAttempts: 2) { _ in owned }
            retry.start()
        }
        expectStandardError(of: result, toContain: ["makeAttempt of", "\"owned-attempt\"", "\"attempt-owner\"", "make a new operation for every attempt"])
    }
}
