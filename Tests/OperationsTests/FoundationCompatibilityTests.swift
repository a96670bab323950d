import Testing
import Dispatch
@testable import Operations

/// Behaviour that code ported from Foundation relies on.
@Suite struct FoundationCompatibilityTests {
    @Test func currentIsTheMainQueueOnTheMainActor() async {
        let current = await MainActor.run { OpQueue.current }
        #expect(current === OpQueue.main)
    }

    @Test func currentIsTheMainQueueInABlockOfTheMainDispatchQueue() {
        let seen = LockedBox<OpQueue?>(nil)
        let done = Gate()
        DispatchQueue.main.async {
            seen.withLockedValue { $0 = OpQueue.current }
            done.open()
        }
        #expect(done.wait())
        #expect(seen.withLockedValue { $0 } === OpQueue.main)
    }

    @Test func currentIsNilOnAnotherThreadOutsideOperations() {
        let seen = LockedBox<OpQueue?>(OpQueue.main)
        let done = Gate()
        DispatchQueue.global().async {
            seen.withLockedValue { $0 = OpQueue.current }
            done.open()
        }
        #expect(done.wait())
        #expect(seen.withLockedValue { $0 } == nil)
    }

    @Test func currentInsideAnOperationIsItsQueueEvenFromTheMainQueue() {
        let queue = OpQueue()
        let seen = LockedBox<OpQueue?>(nil)
        let op = BlockOp { seen.withLockedValue { $0 = OpQueue.current } }
        queue.addOperation(op)
        #expect(queueEmpties(queue))
        #expect(seen.withLockedValue { $0 } === queue)
    }

    @Test func operationsAreEquatableAndHashableByIdentity() {
        let first = BlockOp {}
        let second = BlockOp {}
        let alsoFirst: Op = first
        #expect(first == alsoFirst)
        #expect(first != second)
        #expect(Set<Op>([first, second, alsoFirst]).count == 2)
        var names: [Op: String] = [:]
        names[first] = "first"
        names[second] = "second"
        #expect(names[alsoFirst] == "first")

        let queue = OpQueue()
        queue.isSuspended = true
        queue.addOperations([first, second], waitUntilFinished: false)
        #expect(queue.operations.contains(second))
        #expect(queue.operations.firstIndex(of: second) == 1)
        #expect(queue.operations == [first, second])
        queue.isSuspended = false
        #expect(queueEmpties(queue))
    }

    @Test func subclassesCompareByIdentityToo() {
        let invocation = InvocationOp { 42 }
        let asynchronous = AsyncOp {}
        let operations: [Op] = [invocation, asynchronous]
        #expect(operations.firstIndex(of: asynchronous) == 1)
        #expect(Set(operations).contains(invocation))
        #expect(operations[0] != operations[1])
    }

    @Test func queuesAreEquatableAndHashableByIdentity() {
        let first = OpQueue()
        let second = OpQueue()
        #expect(first == first)
        #expect(first != second)
        #expect(Set([first, second, first, OpQueue.main]).count == 3)
        #expect([second, first].firstIndex(of: first) == 1)
    }

    @available(*, deprecated, message: "exercises the deprecated threadPriority")
    @Test func threadPriorityIsKeptButHasNoEffect() {
        let op = BlockOp {}
        #expect(op.threadPriority == 0.5)
        op.threadPriority = 0.9
        #expect(op.threadPriority == 0.9)
        op.start()
        #expect(op.isFinished)
    }
}
