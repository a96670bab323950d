import Testing
import Synchronization
@testable import Operations

/// A dependency whose dependents are spread across many queues, or are children of many groups,
/// releases them all when it finishes, each queue seeing all of its own at once (issue 22,
/// defect 7: the release took time quadratic in the number of queues; its cost is measured by the
/// benchmarks, this checks what it does).
@Suite struct DependentsAcrossQueuesTests {
    @Test func dependentsSpreadAcrossManyQueuesAllRunOnceTheirDependencyFinishes() async {
        let count = 2_000
        let ran = Atomic<Int>(0)
        let hold = Gate()
        let dependency = BlockOp { _ = hold.wait() }
        let queues = (0..<count).map { _ in OpQueue() }
        for queue in queues {
            let dependent = BlockOp { ran.add(1, ordering: .relaxed) }
            dependent.addDependency(dependency)
            await queue.addOperations([dependent], waitUntilFinished: false)
        }
        let queue = OpQueue()
        await queue.addOperations([dependency], waitUntilFinished: false)
        hold.open()
        for queue in queues {
            await queue.waitUntilAllOperationsAreFinished()
        }
        #expect(ran.load(ordering: .relaxed) == count)
    }

    /// Dependents in several queues, interleaved in the dependency's list: each queue gets all of
    /// its own together, and starts the one of highest priority first.
    @Test func eachQueueStartsItsHighestPriorityDependentFirstWhenTheyAreSpreadAcrossQueues() async {
        let queueCount = 50
        let order = EventLog<(queue: Int, priority: Op.QueuePriority)>()
        let dependency = BlockOp {}
        let queues = (0..<queueCount).map { _ in
            let queue = OpQueue()
            queue.maxConcurrentOperationCount = 1
            queue.isSuspended = true
            return queue
        }
        let priorities: [Op.QueuePriority] = [.veryLow, .normal, .veryHigh]
        var members: [[Op]] = Array(repeating: [], count: queueCount)
        for priority in priorities {
            for index in 0..<queueCount {
                let dependent = BlockOp { order.append((index, priority)) }
                dependent.queuePriority = priority
                dependent.addDependency(dependency)
                members[index].append(dependent)
            }
        }
        for (queue, operations) in zip(queues, members) {
            await queue.addOperations(operations, waitUntilFinished: false)
        }
        dependency.start()
        for queue in queues { queue.isSuspended = false }
        for queue in queues {
            await queue.waitUntilAllOperationsAreFinished()
        }
        for index in 0..<queueCount {
            let ran = order.all.filter { $0.queue == index }.map(\.priority)
            #expect(ran == priorities.reversed(), "queue \(index) ran \(ran)")
        }
    }

    @Test func childrenOfManyGroupsThatWaitForOneDependencyAllRun() async {
        let count = 2_000
        let ran = Atomic<Int>(0)
        let hold = Gate()
        let dependency = BlockOp { _ = hold.wait() }
        let groups = (0..<count).map { _ in
            let child = BlockOp { ran.add(1, ordering: .relaxed) }
            child.addDependency(dependency)
            return GroupOp(operations: [child])
        }
        let queue = OpQueue()
        await queue.addOperations(groups, waitUntilFinished: false)
        #expect(await eventuallyAsync { groups.allSatisfy(\.isExecuting) })
        await OpQueue().addOperations([dependency], waitUntilFinished: false)
        hold.open()
        await queue.waitUntilAllOperationsAreFinished()
        #expect(ran.load(ordering: .relaxed) == count)
        #expect(groups.allSatisfy { $0.isFinished && $0.error == nil })
    }
}
