import Testing
import Dispatch
@testable import Operations

/// A block operation with `.mutuallyExclusive` conditions for `categories`.
private func exclusive(_ categories: String..., name: String? = nil, _ block: @escaping @Sendable () -> Void = {}) -> BlockOp {
    let op = BlockOp(block: block)
    op.name = name
    for category in categories {
        op.addCondition(.mutuallyExclusive(category))
    }
    return op
}

/// The identities of the operations holding `category`, outermost first.
private func holders(_ category: String) -> [ObjectIdentifier] {
    Exclusivity.holders(of: category).map(ObjectIdentifier.init)
}

/// The identities of `operations`.
private func ids(_ operations: Op...) -> [ObjectIdentifier] {
    operations.map(ObjectIdentifier.init)
}

/// Where `op` stands between readiness and its queue's ready list.
private func gate(of op: Op) -> OpStateMachine.Gate {
    op.withState { $0.gate }
}

/// Waits, polling on this thread, until `queue` is empty; `false` after `seconds` (a hang guard).
/// (Unlike `queueEmpties`, it needs no Dispatch thread: Linux adds those only about once a
/// second when tests running in parallel block them all.)
private func drains(_ queue: OpQueue, seconds: Double = 10) -> Bool {
    eventually(seconds: seconds) { queue.operationCount == 0 }
}

/// An operation exclusive for `category` that opens `started` when it runs, then holds the
/// category until `release` is opened; last, it appends `entry` (if any) to `log`.
private struct Holder: Sendable {
    let op: BlockOp
    let started: Gate
    let release: Gate

    init(_ category: String, logging entry: String? = nil, to log: EventLog<String>? = nil) {
        let started = Gate()
        let release = Gate()
        op = exclusive(category) {
            started.open()
            release.wait()
            if let entry { log?.append(entry) }
        }
        self.started = started
        self.release = release
    }

    /// Adds the holder to `queue` and waits until it runs (`false` on a hang).
    func run(on queue: OpQueue) -> Bool {
        queue.addOperation(op)
        return started.wait()
    }
}

@Suite struct ExclusivityTests {
    @Test func operationsSharingACategoryNeverOverlapAcrossQueues() {
        let category = uniqueToken("shared")
        let meter = ConcurrencyMeter()
        let queues = (0..<3).map { _ in OpQueue() }
        for queue in queues {
            for _ in 0..<10 {
                queue.addOperation(exclusive(category) {
                    meter.enter()
                    blockThread(milliseconds: 1)
                    meter.leave()
                })
            }
        }
        for queue in queues {
            #expect(drains(queue))
        }
        #expect(meter.total == 30)
        #expect(meter.peak == 1)
        #expect(holders(category).isEmpty)
    }

    @Test func differentCategoriesOverlap() {
        let first = uniqueToken("first")
        let second = uniqueToken("second")
        let aStarted = Gate()
        let bStarted = Gate()
        let sawOther = EventLog<Bool>()
        let a = exclusive(first) {
            aStarted.open()
            sawOther.append(bStarted.wait(seconds: 5))
        }
        let b = exclusive(second) {
            bStarted.open()
            sawOther.append(aStarted.wait(seconds: 5))
        }
        let queue = OpQueue()
        queue.addOperations([a, b], waitUntilFinished: true)
        #expect(sawOther.all == [true, true])
        #expect(holders(first).isEmpty && holders(second).isEmpty)
    }

    @Test func operationWithTwoCategoriesExcludesOperationsOfEither() {
        let x = uniqueToken("x")
        let y = uniqueToken("y")
        let started = Gate()
        let release = Gate()
        let log = EventLog<String>()
        let both = exclusive(x, y) {
            log.append("both start")
            started.open()
            release.wait()
            log.append("both end")
        }
        let onlyX = exclusive(x) { log.append("x") }
        let onlyY = exclusive(y) { log.append("y") }
        let queue = OpQueue()
        queue.addOperation(both)
        #expect(started.wait())
        queue.addOperation(onlyX)
        queue.addOperation(onlyY)
        // They ask for their categories when the queue starts them.
        #expect(eventually(seconds: 5) { waitsForItsCategory(onlyX) })
        #expect(eventually(seconds: 5) { waitsForItsCategory(onlyY) })
        #expect(holders(x) == ids(both))
        #expect(holders(y) == ids(both))
        release.open()
        #expect(drains(queue))
        #expect(Array(log.all.prefix(2)) == ["both start", "both end"])
        #expect(Set(log.all.dropFirst(2)) == ["x", "y"])
        #expect(holders(x).isEmpty && holders(y).isEmpty)
    }

    @Test func operationWithTwoCategoriesHoldsNeitherWhileWaitingForOne() {
        let x = uniqueToken("x")
        let y = uniqueToken("y")
        let log = EventLog<String>()
        let holderOfY = Holder(y, logging: "y", to: log)
        let both = exclusive(x, y) { log.append("both") }
        let queue = OpQueue()
        #expect(holderOfY.run(on: queue))
        queue.addOperation(both)
        #expect(eventually(seconds: 5) { waitsForItsCategory(both) })
        #expect(holders(x).isEmpty)
        #expect(holders(y) == ids(holderOfY.op))
        holderOfY.release.open()
        #expect(drains(queue))
        #expect(log.all == ["y", "both"])
        #expect(holders(x).isEmpty && holders(y).isEmpty)
    }

    @Test func categoryIsGrantedInTheOrderOperationsBecameReady() {
        let category = uniqueToken("order")
        let log = EventLog<Int>()
        let holder = Holder(category)
        let queue = OpQueue()
        #expect(holder.run(on: queue))
        // Each waiter becomes ready when its trigger is started, here, in this order.
        let triggers = (0..<5).map { _ in BlockOp {} }
        let waiters = (0..<5).map { index in
            let op = exclusive(category) { log.append(index) }
            op.addDependency(triggers[index])
            return op
        }
        for waiter in waiters { queue.addOperation(waiter) }
        let readinessOrder = [3, 1, 4, 0, 2]
        for index in readinessOrder {
            triggers[index].start()
            #expect(eventually(seconds: 5) { waitsForItsCategory(waiters[index]) })
        }
        #expect(log.count == 0)
        holder.release.open()
        #expect(drains(queue))
        #expect(log.all == readinessOrder)
        #expect(holders(category).isEmpty)
    }

    @Test func operationsAddedOneAtATimeGetTheCategoryInThatOrder() {
        let category = uniqueToken("added")
        let log = EventLog<Int>()
        let holder = Holder(category)
        let queue = OpQueue()
        #expect(holder.run(on: queue))
        let waiters = (0..<8).map { index in exclusive(category) { log.append(index) } }
        for waiter in waiters {
            queue.addOperation(waiter)
        }
        // They ask as the queue starts them, perhaps on several threads: they wait in the order
        // they were added (in which they passed their conditions) whatever the order they ask in.
        #expect(eventually(seconds: 5) { waiters.allSatisfy { waitsForItsCategory($0) } })
        holder.release.open()
        #expect(drains(queue))
        #expect(log.all == Array(0..<8))
    }

    @Test func categoryIsReleasedWhenTheHolderFinishes() {
        let category = uniqueToken("release")
        let seenByNext = EventLog<[ObjectIdentifier]>()
        let first = Holder(category)
        let queue = OpQueue()
        #expect(first.run(on: queue))
        let next = exclusive(category) {
            seenByNext.append(holders(category))
        }
        queue.addOperation(next)
        #expect(holders(category) == ids(first.op))
        #expect(!next.isExecuting && !next.isFinished)
        first.release.open()
        #expect(drains(queue))
        #expect(seenByNext.all == [ids(next)])
        #expect(holders(category).isEmpty)
    }

    @Test func cancelledWaiterFinishesPromptlyWithoutRunningAndDoesNotBlockOthers() {
        let category = uniqueToken("cancel")
        let log = EventLog<String>()
        let holder = Holder(category, logging: "holder", to: log)
        let cancelled = exclusive(category) { log.append("cancelled") }
        let next = exclusive(category) { log.append("next") }
        let queue = OpQueue()
        #expect(holder.run(on: queue))
        queue.addOperation(cancelled)
        queue.addOperation(next)
        #expect(eventually(seconds: 5) { waitsForItsCategory(cancelled) })
        cancelled.cancel()
        // Finishes while the holder still holds the category.
        #expect(eventually(seconds: 5) { cancelled.isFinished })
        #expect(holders(category) == ids(holder.op))
        #expect(!next.isExecuting && !next.isFinished)
        holder.release.open()
        #expect(drains(queue))
        #expect(log.all == ["holder", "next"])
        #expect(cancelled.isCancelled && cancelled.error == nil)
        #expect(holders(category).isEmpty)
    }

    @Test func manualStartWaitsForTheCategory() {
        let category = uniqueToken("manual")
        let done = Gate()
        let log = EventLog<String>()
        let holder = Holder(category, logging: "holder", to: log)
        let manual = exclusive(category) { log.append("manual") }
        let queue = OpQueue()
        #expect(holder.run(on: queue))
        // Started by hand from a worker of another queue (it is in no queue itself).
        OpQueue().addOperation {
            manual.start()
            done.open()
        }
        #expect(eventually(seconds: 5) { waitsForItsCategory(manual) })
        #expect(!manual.isFinished)
        holder.release.open()
        #expect(done.wait())
        #expect(log.all == ["holder", "manual"])
        #expect(holders(category).isEmpty)
    }

    @Test func operationsWithFailingConditionsNeverTakeTheCategory() {
        let category = uniqueToken("failing")
        let log = EventLog<String>()
        let holder = Holder(category, logging: "holder", to: log)
        let queue = OpQueue()
        #expect(holder.run(on: queue))
        // The exclusivity condition comes first, yet conditions are passed before categories.
        let failing = exclusive(category) { log.append("failing") }
        failing.addCondition(.predicate("no") { _ in false })
        queue.addOperation(failing)
        // Finishes without waiting for the holder.
        #expect(eventually(seconds: 5) { failing.isFinished })
        #expect(failing.isCancelled)
        #expect((failing.error as? ConditionFailedError)?.condition == "no")
        #expect(holders(category) == ids(holder.op))
        holder.release.open()
        #expect(drains(queue))
        #expect(log.all == ["holder"])
        #expect(holders(category).isEmpty)
    }

    @Test func operationsWithFailingAsyncConditionsNeverTakeTheCategory() async {
        let category = uniqueToken("failing-async")
        let log = EventLog<String>()
        let holder = Holder(category, logging: "holder", to: log)
        let queue = OpQueue()
        queue.addOperation(holder.op)
        #expect(await onOwnThread { holder.started.wait() })
        let failing = exclusive(category) { log.append("failing") }
        failing.addCondition(.evaluate("async no") { _ in false })
        queue.addOperation(failing)
        await failing.waitUntilFinished()
        #expect(failing.isCancelled)
        #expect((failing.error as? ConditionFailedError)?.condition == "async no")
        #expect(holders(category) == ids(holder.op))
        holder.release.open()
        await queue.waitUntilAllOperationsAreFinished()
        #expect(log.all == ["holder"])
        #expect(holders(category).isEmpty)
    }

    // MARK: Groups

    @Test func childrenRunUnderTheirGroupsHoldAndStillExcludeEachOther() {
        let category = uniqueToken("group")
        let meter = ConcurrencyMeter()
        let seen = EventLog<[ObjectIdentifier]>()
        let release = Gate()
        let children = (0..<2).map { index in
            let child = RecordingOp { _ in
                meter.enter()
                seen.append(holders(category))
                if index == 0 { release.wait() }
                blockThread(milliseconds: 5)
                meter.leave()
            }
            child.addCondition(.mutuallyExclusive(category))
            return child
        }
        let group = GroupOp(operations: children)
        group.addCondition(.mutuallyExclusive(category))
        let outsiderSaw = EventLog<Bool>()
        let outsider = exclusive(category) {
            outsiderSaw.append(children.allSatisfy(\.isFinished))
        }
        let queue = OpQueue()
        queue.addOperation(group)
        // The group holds it once the queue starts it (and perhaps a child, nested, already).
        #expect(eventually(seconds: 5) { holders(category).first == ObjectIdentifier(group) })
        queue.addOperation(outsider)
        #expect(eventually(seconds: 5) { waitsForItsCategory(outsider) })
        release.open()
        #expect(drains(queue))
        #expect(meter.total == 2)
        #expect(meter.peak == 1)
        // Each child saw [group, itself] as the holders.
        let expected = Set(children.map { ids(group, $0) })
        #expect(Set(seen.all) == expected)
        #expect(outsiderSaw.all == [true])
        #expect(group.error == nil)
        #expect(holders(category).isEmpty)
    }

    @Test func childIsNotQueuedBehindAnOutsiderWaitingForItsGroupsCategory() {
        // The group holds the category; an outsider waits for it; then a child asks for it. The
        // child goes first (its group cannot give the category back before it is done).
        let category = uniqueToken("nested")
        let trigger = BlockOp {}
        let log = EventLog<String>()
        let child = exclusive(category) { log.append("child") }
        child.addDependency(trigger)
        let group = GroupOp(operations: [child])
        group.addCondition(.mutuallyExclusive(category))
        let outsider = exclusive(category) { log.append("outsider") }
        let queue = OpQueue()
        queue.addOperation(group)
        #expect(eventually(seconds: 5) { group.isExecuting })
        queue.addOperation(outsider)
        #expect(eventually(seconds: 5) { waitsForItsCategory(outsider) })
        trigger.start()
        #expect(drains(queue))
        #expect(log.all == ["child", "outsider"])
        #expect(holders(category).isEmpty)
    }

    @Test func groupAsksForItsChildrensCategoriesWhenItStarts() {
        let x = uniqueToken("gx")
        let y = uniqueToken("gy")
        let log = EventLog<String>()
        let holderOfY = Holder(y, logging: "holder of y", to: log)
        let seenX = EventLog<[ObjectIdentifier]>()
        let seenY = EventLog<[ObjectIdentifier]>()
        let child = exclusive(y) {
            seenX.append(holders(x))
            seenY.append(holders(y))
            log.append("child")
        }
        let group = GroupOp(operations: [child])
        group.addCondition(.mutuallyExclusive(x))
        #expect(group.exclusivityCategoriesToRequest == [x, y].sorted())
        let queue = OpQueue()
        #expect(holderOfY.run(on: queue))
        queue.addOperation(group)
        // All or none: the group waits for y, holding neither.
        #expect(eventually(seconds: 5) { waitsForItsCategory(group) })
        #expect(holders(x).isEmpty)
        #expect(holders(y) == ids(holderOfY.op))
        holderOfY.release.open()
        #expect(drains(queue))
        #expect(log.all == ["holder of y", "child"])
        #expect(seenX.all == [ids(group)])
        #expect(seenY.all == [ids(group, child)])
        #expect(holders(x).isEmpty && holders(y).isEmpty)
    }

    @Test func childAddedWhileTheGroupRunsGetsItsOwnCategoryFromOutside() {
        // A group holding x gets a child needing y after it started (not asked for at start):
        // the child waits for y like any operation, and gets it once the outsider gives it back.
        let x = uniqueToken("lx")
        let y = uniqueToken("ly")
        let log = EventLog<String>()
        let holderOfY = Holder(y, logging: "holder of y", to: log)
        let late = exclusive(y) { log.append("late") }
        let starter = BlockOp {
            log.append("starter")
            Op.current?.group?.addChild(late)
        }
        let group = GroupOp(operations: [starter])
        group.addCondition(.mutuallyExclusive(x))
        let queue = OpQueue()
        #expect(holderOfY.run(on: queue))
        queue.addOperation(group)
        #expect(eventually(seconds: 5) { late.group === group && waitsForItsCategory(late) })
        #expect(holders(x) == ids(group))
        holderOfY.release.open()
        #expect(drains(queue))
        #expect(log.all == ["starter", "holder of y", "late"])
        #expect(holders(x).isEmpty && holders(y).isEmpty)
    }

    @Test
    func lateChildIsNotQueuedBehindAnOutsiderWaitingForItsGroup() {
        // The group holds x. An outsider asks for [x, y]: it waits for x, and reserves y. A child
        // added to the running group then asks for y: it waits behind the outsider's reservation,
        // the outsider waits for the group, and the group waits for the child.
        let x = uniqueToken("dx")
        let y = uniqueToken("dy")
        let started = Gate()
        let go = Gate()
        let log = EventLog<String>()
        let late = exclusive(y) { log.append("late") }
        let starter = BlockOp {
            started.open()
            go.wait()
            Op.current?.group?.addChild(late)
        }
        let group = GroupOp(operations: [starter])
        group.addCondition(.mutuallyExclusive(x))
        let outsider = exclusive(x, y) { log.append("outsider") }
        let queue = OpQueue()
        queue.addOperation(group)
        #expect(started.wait())
        queue.addOperation(outsider)
        #expect(eventually(seconds: 5) { waitsForItsCategory(outsider) })
        go.open()
        let emptied = drains(queue, seconds: 2)
        #expect(emptied)
        #expect(log.all == ["late", "outsider"])
        if !emptied {
            // Unstick it, so the test leaves nothing behind.
            outsider.cancel()
            #expect(drains(queue))
        }
    }

    @Test func cancelledGroupWaitingForItsCategoryFinishesPromptlyWithoutTakingIt() {
        let category = uniqueToken("cancel-group")
        let log = EventLog<String>()
        let holder = Holder(category, logging: "holder", to: log)
        let group = GroupOp(operations: [BlockOp {}])
        group.addCondition(.mutuallyExclusive(category))
        let queue = OpQueue()
        #expect(holder.run(on: queue))
        queue.addOperation(group)
        #expect(eventually(seconds: 5) { waitsForItsCategory(group) })
        group.cancel()
        // Finishes while the holder still holds the category, and never took it.
        #expect(eventually(seconds: 5) { group.isFinished })
        #expect(holders(category) == ids(holder.op))
        let next = exclusive(category) { log.append("next") }
        queue.addOperation(next)
        holder.release.open()
        #expect(drains(queue))
        #expect(log.all == ["holder", "next"])
        #expect(group.isCancelled)
        #expect(holders(category).isEmpty)
    }

    @Test
    func cancelledGroupWaitingForItsCategoryDoesNotRunItsChildren() {
        // A race: repeated so that it shows.
        let category = uniqueToken("cancel-group-children")
        var childrenThatRan = 0
        for _ in 0..<100 {
            let log = EventLog<String>()
            let holder = Holder(category)
            let child = BlockOp { log.append("child") }
            let group = GroupOp(operations: [child])
            group.addCondition(.mutuallyExclusive(category))
            let queue = OpQueue()
            #expect(holder.run(on: queue))
            queue.addOperation(group)
            group.cancel()
            holder.release.open()
            #expect(drains(queue))
            if log.count > 0 || !child.isCancelled { childrenThatRan += 1 }
        }
        #expect(childrenThatRan == 0)
        #expect(holders(category).isEmpty)
    }

    @Test func childWithTheGroupsCategoryInANestedGroup() {
        let category = uniqueToken("deep")
        let seen = EventLog<[ObjectIdentifier]>()
        let leaf = exclusive(category) {
            seen.append(holders(category))
        }
        let inner = GroupOp(operations: [leaf])
        let outer = GroupOp(operations: [inner])
        outer.addCondition(.mutuallyExclusive(category))
        let queue = OpQueue()
        queue.addOperation(outer)
        #expect(drains(queue))
        #expect(seen.all == [ids(outer, leaf)])
        #expect(holders(category).isEmpty)
    }
}
