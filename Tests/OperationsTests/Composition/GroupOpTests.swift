import Dispatch
import Testing
@testable import Operations

/// An error a child fails with, told apart by its number.
private struct ChildFailure: Error, Equatable {
    let number: Int
}

/// The numbers of the `ChildFailure`s a group failed with, in the order the group lists them;
/// `nil` if the group's error is not a ``GroupError``.
private func failureNumbers(of group: GroupOp) -> [Int?]? {
    (group.error as? GroupError)?.errors.map { ($0 as? ChildFailure)?.number }
}

/// A `GroupOp` runs its children (in its own queue, as their dependencies allow), finishes only
/// after every one of them, reports their failures, cancels them with itself, nests, and traps on
/// misuse. Tests with `async` bodies are `async` and wait with `await`, so that no test blocks a
/// thread of Swift's cooperative pool while the work needs a task.
@Suite struct GroupOpTests {

    // MARK: Running children

    @Test func groupFinishesAfterEveryChild() {
        let log = EventLog<String>()
        let first = RecordingOp(name: "first") { _ in log.append("first") }
        let second = RecordingOp(name: "second") { _ in
            blockThread(milliseconds: 20)
            log.append("second")
        }
        let third = RecordingOp(name: "third") { _ in log.append("third") }
        let group = GroupOp(operations: [first, second, third])
        let groupFinishedDuringChildCompletion = EventLog<Bool>()
        second.completionBlock = {
            groupFinishedDuringChildCompletion.append(group.isFinished)
            blockThread(milliseconds: 30)
            log.append("second completion")
        }
        group.completionBlock = { log.append("group completion") }
        let queue = OpQueue()
        queue.addOperation(group)
        group.waitUntilFinished()

        #expect(group.isFinished)
        #expect(first.isFinished && second.isFinished && third.isFinished)
        #expect(groupFinishedDuringChildCompletion.all == [false])
        #expect(group.error == nil)
        let events = log.all
        #expect(Set(events) == ["first", "second", "third", "second completion", "group completion"])
        #expect(events.last == "group completion")
    }

    @Test func childrenRunInDependencyOrder() {
        let log = EventLog<String>()
        let a = RecordingOp(name: "a") { _ in
            blockThread(milliseconds: 10)
            log.append("a")
        }
        let b = RecordingOp(name: "b") { _ in
            blockThread(milliseconds: 10)
            log.append("b")
        }
        let c = RecordingOp(name: "c") { _ in log.append("c") }
        c.addDependency(b)
        b.addDependency(a)
        // Added in the reverse of the dependency order.
        let group = GroupOp(operations: [c, b, a])
        OpQueue().addOperation(group)
        group.waitUntilFinished()
        #expect(log.all == ["a", "b", "c"])
    }

    @Test func childrenListsTheChildrenInTheOrderTheyWereAdded() {
        let a = BlockOp {}
        let b = BlockOp {}
        let c = BlockOp {}
        let group = GroupOp(operations: [a, b])
        group.addChild(c)
        let children = group.children
        #expect(children.count == 3)
        #expect(children.count == 3 && children[0] === a && children[1] === b && children[2] === c)
        #expect(a.group === group && b.group === group && c.group === group)
        #expect(BlockOp {}.group == nil)
        #expect(group.group == nil)
    }

    @Test func childrenDependOnOperationsOutsideTheGroup() {
        let log = EventLog<String>()
        let release = Gate()
        let outside = RecordingOp(name: "outside") { _ in
            _ = release.wait()
            log.append("outside")
        }
        let freeRan = Gate()
        let free = RecordingOp(name: "free") { _ in
            log.append("free")
            freeRan.open()
        }
        let dependent = RecordingOp(name: "dependent") { _ in log.append("dependent") }
        dependent.addDependency(outside)
        let group = GroupOp(operations: [free, dependent])
        let queue = OpQueue()
        queue.addOperations([outside, group], waitUntilFinished: false)

        #expect(freeRan.wait())
        #expect(!dependent.isExecuting && !dependent.isFinished)
        #expect(!group.isFinished)
        release.open()
        group.waitUntilFinished()
        #expect(log.all.filter { $0 != "free" } == ["outside", "dependent"])
        #expect(log.count == 3)
    }

    @Test func outsideDependentOfTheGroupStartsAfterEveryChildFinished() {
        let log = EventLog<String>()
        let release = Gate()
        let quick = RecordingOp(name: "quick") { _ in log.append("quick") }
        let slow = RecordingOp(name: "slow") { _ in
            _ = release.wait()
            log.append("slow")
        }
        let group = GroupOp(operations: [quick, slow])
        let seenByAfter = EventLog<Bool>()
        let after = RecordingOp(name: "after") { _ in
            seenByAfter.append(quick.isFinished && slow.isFinished && group.isFinished)
            log.append("after")
        }
        after.addDependency(group)
        let queue = OpQueue()
        queue.addOperations([after, group], waitUntilFinished: false)

        #expect(eventually { quick.isFinished })
        #expect(!after.isExecuting && !after.isFinished)
        release.open()
        after.waitUntilFinished()
        #expect(seenByAfter.all == [true])
        #expect(log.all.last == "after")
        #expect(log.count == 3)
    }

    @Test func childAddedByAChildWhileTheGroupRunsIsAwaited() {
        let log = EventLog<String>()
        let releaseLate = Gate()
        let late = RecordingOp(name: "late") { _ in
            _ = releaseLate.wait()
            log.append("late")
        }
        let adder = RecordingOp(name: "adder") { _ in
            Op.current?.group?.addChild(late)
            log.append("adder")
        }
        let group = GroupOp(operations: [adder])
        group.completionBlock = { log.append("group completion") }
        OpQueue().addOperation(group)

        #expect(eventually { adder.isFinished })
        #expect(group.childCount == 2 && group.children.last === late)
        #expect(late.group === group)
        #expect(!group.isFinished)
        releaseLate.open()
        group.waitUntilFinished()
        #expect(late.isFinished)
        #expect(log.all == ["adder", "late", "group completion"])
    }

    @Test func childAddedFromOutsideWhileTheGroupRunsIsAwaited() {
        let release = Gate()
        let holder = RecordingOp(name: "holder") { _ in _ = release.wait() }
        let group = GroupOp(operations: [holder])
        OpQueue().addOperation(group)
        #expect(eventually { holder.isExecuting })
        let ranLate = Gate()
        let late = RecordingOp(name: "late") { _ in ranLate.open() }
        group.addChild(late)
        // The late child is scheduled at once, while the first child still runs.
        #expect(ranLate.wait())
        #expect(!group.isFinished)
        release.open()
        group.waitUntilFinished()
        #expect(late.isFinished && holder.isFinished)
    }

    // MARK: Concurrency

    @Test func maxConcurrentOperationCountLimitsRunningChildren() {
        let meter = ConcurrencyMeter()
        let reachedLimit = EventLog<Bool>()
        let group = GroupOp()
        group.maxConcurrentOperationCount = 2
        #expect(group.maxConcurrentOperationCount == 2)
        for index in 0..<5 {
            group.addChild(RecordingOp(name: "limited \(index)") { _ in
                meter.enter()
                reachedLimit.append(eventually(seconds: 2) { meter.peak >= 2 })
                blockThread(milliseconds: 10)   // room for a child over the limit to start
                meter.leave()
            })
        }
        OpQueue().addOperation(group)
        group.waitUntilFinished()
        #expect(meter.peak == 2)
        #expect(meter.total == 5)
        #expect(reachedLimit.all == Array(repeating: true, count: 5))
    }

    @Test func childrenRunConcurrentlyByDefault() {
        let meter = ConcurrencyMeter()
        let metTheOthers = EventLog<Bool>()
        let group = GroupOp()
        #expect(group.maxConcurrentOperationCount == OpQueue.defaultMaxConcurrentOperationCount)
        for index in 0..<3 {
            group.addChild(RecordingOp(name: "concurrent \(index)") { _ in
                meter.enter()
                // Each child waits until all three run at once.
                metTheOthers.append(eventually(seconds: 2) { meter.peak >= 3 })
                meter.leave()
            })
        }
        OpQueue().addOperation(group)
        group.waitUntilFinished()
        #expect(meter.peak == 3)
        #expect(metTheOthers.all == [true, true, true])
    }

    @Test func groupOccupiesOneSlotOfItsQueueWhileChildrenRun() {
        // A width-1 queue: the group holds the slot while its children run, so an operation
        // added after it waits for the whole group.
        let log = EventLog<String>()
        let child = RecordingOp(name: "child") { _ in
            blockThread(milliseconds: 20)
            log.append("child")
        }
        let group = GroupOp(operations: [child])
        let next = RecordingOp(name: "next") { _ in log.append("next") }
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        queue.addOperations([group, next], waitUntilFinished: true)
        #expect(log.all == ["child", "next"])
    }

    // MARK: Cancelling

    @Test func cancellingTheGroupCancelsEveryChild() {
        let release = Gate()
        let running = Gate()
        let ranBodies = EventLog<String>()
        let busy = RecordingOp(name: "busy") { _ in
            ranBodies.append("busy")
            running.open()
            _ = release.wait()
        }
        let pending = RecordingOp(name: "pending") { _ in ranBodies.append("pending") }
        pending.addDependency(busy)
        let group = GroupOp(operations: [busy, pending])
        OpQueue().addOperation(group)
        #expect(running.wait())

        group.cancel()
        #expect(group.isCancelled)
        #expect(busy.isCancelled)
        #expect(pending.isCancelled)
        #expect(!group.isFinished)

        release.open()
        group.waitUntilFinished()
        #expect(group.isFinished)
        #expect(busy.isFinished && pending.isFinished)
        #expect(ranBodies.all == ["busy"])
    }

    @Test func childrenAddedAfterCancelStartCancelled() {
        let release = Gate()
        let running = Gate()
        let holder = RecordingOp(name: "holder") { _ in
            running.open()
            _ = release.wait()
        }
        let group = GroupOp(operations: [holder])
        OpQueue().addOperation(group)
        #expect(running.wait())
        group.cancel()

        let ranLate = EventLog<Int>()
        let late = RecordingOp(name: "late") { _ in ranLate.append(1) }
        group.addChild(late)
        #expect(late.isCancelled)
        #expect(late.group === group)

        release.open()
        group.waitUntilFinished()
        #expect(late.isFinished)
        #expect(ranLate.count == 0)
    }

    @Test func childCancelsItsGroup() {
        let ranBodies = EventLog<String>()
        let canceller = RecordingOp(name: "canceller") { _ in
            ranBodies.append("canceller")
            Op.current?.group?.cancel()
        }
        let later = RecordingOp(name: "later") { _ in ranBodies.append("later") }
        later.addDependency(canceller)
        let group = GroupOp(operations: [canceller, later])
        OpQueue().addOperation(group)
        group.waitUntilFinished()
        #expect(group.isCancelled)
        #expect(canceller.isCancelled)
        #expect(later.isCancelled && later.isFinished)
        #expect(ranBodies.all == ["canceller"])
    }

    @Test func groupCancelledBeforeStartingLetsItsCancelledChildrenFinish() {
        let ranBodies = EventLog<String>()
        let a = RecordingOp(name: "a") { _ in ranBodies.append("a") }
        let b = RecordingOp(name: "b") { _ in ranBodies.append("b") }
        b.addDependency(a)
        let group = GroupOp(operations: [a, b])
        let childCompletions = EventLog<String>()
        a.completionBlock = { childCompletions.append("a") }
        b.completionBlock = { childCompletions.append("b") }
        group.cancel()
        #expect(a.isCancelled && b.isCancelled)
        #expect(!a.isFinished && !b.isFinished)   // they finish when the group runs

        let queue = OpQueue()
        queue.addOperation(group)
        group.waitUntilFinished()
        #expect(group.isFinished && group.isCancelled)
        #expect(a.isFinished && b.isFinished)
        #expect(Set(childCompletions.all) == ["a", "b"])
        #expect(ranBodies.count == 0)
        #expect(group.error == nil)
        #expect(group.progress.completedUnitCount == 2)
    }

    // MARK: Errors

    @Test func groupErrorListsFailedChildrenInTheOrderTheyFailed() async {
        let first = AsyncOp { throw ChildFailure(number: 1) }
        let succeeding = BlockOp {}
        // Each failure waits until the previous one is over, so the order is certain.
        let second = RecordingOp(name: "second") { op in
            first.waitUntilFinished()
            op.cancel(with: ChildFailure(number: 2))
        }
        second.addDependency(first)
        let third = AsyncOp {
            await second.waitUntilFinished()
            throw ChildFailure(number: 3)
        }
        third.addDependency(second)
        succeeding.addDependency(first)
        // Added in another order than they fail.
        let group = GroupOp(operations: [third, succeeding, second, first])
        let queue = OpQueue()
        queue.addOperation(group)
        await group.waitUntilFinished()

        #expect(failureNumbers(of: group) == [1, 2, 3])
        #expect(second.error as? ChildFailure == ChildFailure(number: 2))
        #expect(succeeding.error == nil)
        #expect(!group.isCancelled)
        let description = (group.error as? GroupError)?.description ?? ""
        #expect(description.hasPrefix("3 child operation(s) of the group failed"))
    }

    @Test func groupHasNoErrorWhenNoChildFailed() {
        let cancelled = BlockOp {}
        cancelled.cancel()   // cancelled without an error is not a failure
        let group = GroupOp(operations: [BlockOp {}, cancelled, RecordingOp { _ in }])
        OpQueue().addOperation(group)
        group.waitUntilFinished()
        #expect(group.isFinished)
        #expect(group.error == nil)
    }

    @Test func failingChildDoesNotCancelTheOthersByDefault() {
        let failing = RecordingOp(name: "failing") { op in op.cancel(with: ChildFailure(number: 7)) }
        let sawItselfCancelled = EventLog<Bool>()
        let other = RecordingOp(name: "other") { op in
            failing.waitUntilFinished()   // the failure has been counted by now
            sawItselfCancelled.append(op.isCancelled)
        }
        other.addDependency(failing)
        let group = GroupOp(operations: [failing, other])
        #expect(!group.cancelsChildrenOnFailure)
        OpQueue().addOperation(group)
        group.waitUntilFinished()
        #expect(sawItselfCancelled.all == [false])
        #expect(!other.isCancelled)
        #expect(failureNumbers(of: group) == [7])
    }

    @Test func cancelsChildrenOnFailureCancelsTheOthersAtTheFirstFailure() async {
        // `held` waits for an operation that never runs, so only a cancellation lets it finish.
        let neverRuns = BlockOp {}
        let heldRan = EventLog<Int>()
        let held = RecordingOp(name: "held") { _ in heldRan.append(1) }
        held.addDependency(neverRuns)
        let release = Gate()
        let running = RecordingOp(name: "running") { _ in _ = release.wait() }
        let failing = AsyncOp {
            // Fails once `running` runs (polling, with a hang guard).
            var polls = 0
            while !running.isExecuting && polls < 5_000 {
                polls += 1
                try? await Task.sleep(for: .milliseconds(1))
            }
            throw ChildFailure(number: 9)
        }
        let group = GroupOp(operations: [running, held, failing])
        group.cancelsChildrenOnFailure = true
        #expect(group.cancelsChildrenOnFailure)
        let queue = OpQueue()
        queue.addOperation(group)

        await failing.waitUntilFinished()   // the failure has been counted by now
        #expect(running.isCancelled)
        let heldWasCancelled = held.isCancelled
        #expect(heldWasCancelled)
        if !heldWasCancelled { held.cancel() }   // hang guard: `held` could never finish
        release.open()
        await group.waitUntilFinished()
        #expect(held.isFinished)
        #expect(heldRan.count == 0)
        #expect(!failing.isCancelled)
        #expect(failureNumbers(of: group) == [9])
    }

    // MARK: Nesting and progress

    @Test func groupNestedInAGroupRunsItsChildren() {
        let log = EventLog<String>()
        let innerChild = RecordingOp(name: "inner child") { _ in
            blockThread(milliseconds: 10)
            log.append("inner child")
        }
        let inner = GroupOp(operations: [innerChild])
        let after = RecordingOp(name: "after inner") { _ in log.append("after inner") }
        after.addDependency(inner)
        let outer = GroupOp(operations: [inner, after])
        outer.completionBlock = { log.append("outer completion") }
        OpQueue().addOperation(outer)
        outer.waitUntilFinished()
        #expect(inner.group === outer)
        #expect(innerChild.group === inner)
        #expect(inner.isFinished && innerChild.isFinished)
        #expect(log.all == ["inner child", "after inner", "outer completion"])
    }

    @Test func progressRollsUpANestedGroup() {
        let releaseSlow = Gate()
        let releaseOuterChild = Gate()
        let quick = BlockOp {}
        let slow = RecordingOp(name: "slow") { _ in _ = releaseSlow.wait() }
        let inner = GroupOp(operations: [quick, slow])
        let done = BlockOp {}
        let held = RecordingOp(name: "held") { _ in _ = releaseOuterChild.wait() }
        let outer = GroupOp(operations: [done, inner, held])

        #expect(outer.progress.totalUnitCount == 3)
        #expect(outer.progress.completedUnitCount == 0)
        #expect(outer.progress.fractionCompleted == 0)

        OpQueue().addOperation(outer)
        // `done` and `quick` finish; `slow` and `held` are held.
        #expect(eventually { done.isFinished && quick.isFinished && slow.isExecuting && held.isExecuting })
        #expect(inner.progress.totalUnitCount == 2)
        #expect(inner.progress.completedUnitCount == 1)
        #expect(inner.progress.fractionCompleted == 0.5)
        #expect(outer.progress.totalUnitCount == 3)
        #expect(outer.progress.completedUnitCount == 1)
        #expect(abs(outer.progress.fractionCompleted - 1.5 / 3) < 1e-9)

        releaseSlow.open()
        inner.waitUntilFinished()
        #expect(outer.progress.completedUnitCount == 2)
        #expect(abs(outer.progress.fractionCompleted - 2.0 / 3) < 1e-9)
        #expect(outer.progress.description == "2 of 3")

        releaseOuterChild.open()
        outer.waitUntilFinished()
        #expect(outer.progress.completedUnitCount == 3 && outer.progress.totalUnitCount == 3)
        #expect(outer.progress.fractionCompleted == 1 && outer.progress.isFinished)
    }

    @Test func emptyGroupFinishesAtOnce() {
        let group = GroupOp()
        #expect(group.children.isEmpty)
        #expect(group.progress.fractionCompleted == 0)
        group.start()
        #expect(group.isFinished)
        #expect(group.error == nil)
        #expect(group.progress.totalUnitCount == 0 && group.progress.fractionCompleted == 1)

        let queued = GroupOp()
        OpQueue().addOperation(queued)
        queued.waitUntilFinished()
        #expect(queued.isFinished)
    }

    // MARK: Where children run

    @Test func childrenRunOnTheUnderlyingQueueOfTheGroupsQueue() {
        let key = DispatchSpecificKey<String>()
        let dispatchQueue = DispatchQueue(label: "group-op-tests.underlying")
        dispatchQueue.setSpecific(key: key, value: "underlying")
        let seen = EventLog<String?>()
        let record: @Sendable (RecordingOp) -> Void = { _ in seen.append(DispatchQueue.getSpecific(key: key)) }
        let nestedChild = RecordingOp(name: "nested child", record)
        let inner = GroupOp(operations: [nestedChild])
        let group = GroupOp(operations: [RecordingOp(name: "one", record), RecordingOp(name: "two", record), inner])
        let queue = OpQueue()
        queue.underlyingQueue = dispatchQueue
        queue.addOperation(group)
        group.waitUntilFinished()
        #expect(seen.all == ["underlying", "underlying", "underlying"])
    }

    @Test func childrenRunOnTheWorkerPoolWithoutAnUnderlyingQueue() {
        let key = DispatchSpecificKey<String>()
        let dispatchQueue = DispatchQueue(label: "group-op-tests.unused")
        dispatchQueue.setSpecific(key: key, value: "unused")
        let seen = EventLog<String?>()
        let group = GroupOp(operations: [RecordingOp { _ in seen.append(DispatchQueue.getSpecific(key: key)) }])
        OpQueue().addOperation(group)
        group.waitUntilFinished()
        #expect(seen.all == [nil])
    }

    @Test func childQueueHasTheGroupsQualityOfService() {
        let seen = EventLog<DispatchQoS.QoSClass?>()
        let queuesSeen = EventLog<Bool>()
        let queue = OpQueue()
        let child = RecordingOp(name: "qos child") { _ in
            seen.append(OpQueue.current?.qualityOfService)
            queuesSeen.append(OpQueue.current != nil && OpQueue.current !== queue)
        }
        let group = GroupOp(operations: [child])
        group.qualityOfService = .utility
        queue.addOperation(group)
        group.waitUntilFinished()
        #expect(seen.all == [.utility])
        #expect(queuesSeen.all == [true])
    }

    // MARK: Op.current

    @Test func currentIsTheOperationWhoseBodyRuns() {
        #expect(Op.current == nil)
        let seen = EventLog<Bool>()
        let group = GroupOp()
        let child = RecordingOp(name: "current child") { op in
            seen.append(Op.current === op)
            seen.append(Op.current?.group === group)
        }
        group.addChild(child)
        let standalone = RecordingOp(name: "standalone") { op in seen.append(Op.current === op) }
        standalone.start()
        OpQueue().addOperation(group)
        group.waitUntilFinished()
        #expect(seen.all == [true, true, true])
        #expect(Op.current == nil)
    }

    @Test func currentIsTheAsyncOpInsideItsAsyncBody() async {
        let seen = EventLog<ObjectIdentifier?>()
        let groupsSeen = EventLog<Bool>()
        let group = GroupOp()
        let op = AsyncOp {
            seen.append(Op.current.map { ObjectIdentifier($0) })
            await Task.yield()
            seen.append(Op.current.map { ObjectIdentifier($0) })
            groupsSeen.append(Op.current?.group === group)
        }
        group.addChild(op)
        OpQueue().addOperation(group)
        await group.waitUntilFinished()
        #expect(seen.all == [ObjectIdentifier(op), ObjectIdentifier(op)])
        #expect(groupsSeen.all == [true])
        #expect(Op.current == nil)
    }

    // MARK: Producing

    @Test func produceFromAQueuedOperationAddsItToTheSameQueue() {
        let queue = OpQueue()
        let producedRanIn = EventLog<Bool>()
        let produced = RecordingOp(name: "produced") { _ in producedRanIn.append(OpQueue.current === queue) }
        let producer = RecordingOp(name: "producer") { op in op.produce(produced) }
        let productions = EventLog<String>()
        producer.addObserver(BlockObserver(didProduce: { op, made in
            productions.append("\(op.name ?? "?") produced \(made.name ?? "?")")
        }))
        queue.addOperation(producer)
        #expect(queueEmpties(queue))
        #expect(produced.isFinished)
        #expect(producedRanIn.all == [true])
        #expect(produced.group == nil)
        #expect(eventually { productions.count == 1 })
        #expect(productions.all == ["producer produced produced"])
    }

    @Test func produceFromAGroupsChildAddsAChildToTheGroup() {
        let release = Gate()
        let log = EventLog<String>()
        let produced = RecordingOp(name: "produced") { _ in
            _ = release.wait()
            log.append("produced")
        }
        let producer = RecordingOp(name: "producer") { op in
            op.produce(produced)
            log.append("producer")
        }
        let productions = EventLog<String>()
        producer.addObserver(BlockObserver(didProduce: { op, made in
            productions.append("\(op.name ?? "?") produced \(made.name ?? "?")")
        }))
        let group = GroupOp(operations: [producer])
        group.completionBlock = { log.append("group completion") }
        let queue = OpQueue()
        queue.addOperation(group)

        #expect(eventually { producer.isFinished })
        #expect(produced.group === group)
        // The producer is let go once it has finished; the produced child is held while it runs.
        #expect(group.childCount == 2 && group.children.last === produced)
        #expect(!group.isFinished)
        release.open()
        group.waitUntilFinished()
        #expect(log.all == ["producer", "produced", "group completion"])
        #expect(eventually { productions.count == 1 })
        #expect(productions.all == ["producer produced produced"])
    }

    // MARK: Misuse

    @Test(.oneExitTestAtATime) func addingAChildAfterTheGroupFinishedTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let group = GroupOp()
            group.name = "finished-group"
            group.start()
            await group.waitUntilFinished()
            let late = BlockOp {}
            late.name = "too-late"
            group.addChild(late)
        }
        expectStandardError(of: result, toContain: ["\"finished-group\"", "after it finished"])
    }

    @Test(.oneExitTestAtATime) func addingAnOperationThatIsInAQueueAsAChildTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.isSuspended = true
            let op = BlockOp {}
            op.name = "queued-op"
            queue.addOperation(op)
            let group = GroupOp()
            group.name = "taker"
            group.addChild(op)
        }
        expectStandardError(of: result, toContain: ["\"queued-op\"", "\"taker\"", "in a queue already"])
    }

    @Test(.oneExitTestAtATime) func addingAChildOfAnotherGroupTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = BlockOp {}
            op.name = "owned-child"
            let first = GroupOp(operations: [op])
            first.name = "first-owner"
            let second = GroupOp()
            second.name = "second-owner"
            second.addChild(op)
        }
        expectStandardError(of: result, toContain: ["\"owned-child\"", "\"first-owner\"", "\"second-owner\"", "belongs to one group"])
    }

    @Test(.oneExitTestAtATime) func addingAGroupToItselfTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let group = GroupOp()
            group.name = "ouroboros"
            group.addChild(group)
        }
        expectStandardError(of: result, toContain: ["\"ouroboros\"", "cannot be nested in itself"])
    }

    @Test(.oneExitTestAtATime) func addingAGroupToItsOwnDescendantTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let inner = GroupOp()
            inner.name = "inner-group"
            let outer = GroupOp(operations: [inner])
            outer.name = "outer-group"
            inner.addChild(outer)
        }
        expectStandardError(of: result, toContain: ["\"outer-group\"", "\"inner-group\"", "cannot be nested in itself"])
    }

    @Test(.oneExitTestAtATime) func producingFromANonExecutingOperationTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let idle = BlockOp {}
            idle.name = "idle-producer"
            let made = BlockOp {}
            made.name = "made"
            idle.produce(made)
        }
        expectStandardError(of: result, toContain: ["\"idle-producer\"", "\"made\"", "not executing"])
    }

    @Test(.oneExitTestAtATime) func producingFromAManuallyStartedOperationTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let producer = RecordingOp(name: "hand-started") { op in
                let made = BlockOp {}
                made.name = "orphan"
                op.produce(made)
            }
            producer.start()
        }
        expectStandardError(of: result, toContain: ["\"hand-started\"", "\"orphan\"", "in no queue"])
    }

    // MARK: Failure races

    // A dependent of a failed child starts as soon as that child finishes, so the group must have
    // counted the failure by then. Each test repeats a racy scenario to catch the race.

    @Test func dependentsFailureIsListedAfterTheFailureItDependsOn() async {
        for _ in 0..<300 {
            let first = AsyncOp { throw ChildFailure(number: 1) }
            let second = AsyncOp { throw ChildFailure(number: 2) }
            second.addDependency(first)
            let group = GroupOp(operations: [first, second])
            OpQueue().addOperation(group)
            await group.waitUntilFinished()
            let numbers = failureNumbers(of: group)
            #expect(numbers == [1, 2])
            if numbers != [1, 2] { return }
        }
    }

    @Test func cancelsChildrenOnFailureKeepsDependentsOfTheFailedChildFromRunning() async {
        for _ in 0..<300 {
            let ran = EventLog<Int>()
            let failing = AsyncOp { throw ChildFailure(number: 1) }
            let dependent = RecordingOp(name: "dependent") { _ in ran.append(1) }
            dependent.addDependency(failing)
            let group = GroupOp(operations: [failing, dependent])
            group.cancelsChildrenOnFailure = true
            OpQueue().addOperation(group)
            await group.waitUntilFinished()
            #expect(ran.count == 0)
            #expect(dependent.isCancelled)
            if ran.count != 0 { return }
        }
    }
}
