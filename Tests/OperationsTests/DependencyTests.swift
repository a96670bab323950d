import Testing
import Dispatch
@testable import Operations

@Suite(.offTheCooperativePool) struct DependencyTests {
    @Test func operationWithAnUnfinishedDependencyIsNotReady() {
        let a = BlockOp {}
        let b = BlockOp {}
        b.addDependency(a)
        #expect(!b.isReady)
        #expect(b.dependencies.count == 1 && b.dependencies[0] === a)
        a.start()
        #expect(b.isReady)
    }

    @Test func dependencyOnAFinishedOperationDoesNotHoldBack() {
        let a = BlockOp {}
        a.start()
        let b = BlockOp {}
        b.addDependency(a)
        #expect(b.isReady)
        #expect(b.dependencies.count == 1)
    }

    @Test func dependentRunsAfterItsDependencyInAQueue() {
        let log = EventLog<String>()
        let queue = OpQueue()
        let a = BlockOp { blockThread(milliseconds: 20); log.append("a") }
        let b = BlockOp { log.append("b") }
        b.addDependency(a)
        queue.addOperations([b, a], waitUntilFinished: true)
        #expect(log.all == ["a", "b"])
    }

    @Test func dependentRunsAfterItsCancelledDependency() {
        let log = EventLog<String>()
        let queue = OpQueue()
        let a = BlockOp { log.append("a") }
        let b = BlockOp { log.append("b") }
        b.addDependency(a)
        a.cancel()
        queue.addOperations([a, b], waitUntilFinished: true)
        #expect(log.all == ["b"])
        #expect(a.isFinished && a.isCancelled)
        #expect(b.isFinished && !b.isCancelled)
    }

    @Test func dependenciesWorkAcrossQueues() {
        let log = EventLog<String>()
        let first = OpQueue()
        let second = OpQueue()
        let gate = Gate()
        let a = BlockOp { gate.wait(); log.append("a") }
        let b = BlockOp { log.append("b") }
        b.addDependency(a)
        second.addOperation(b)
        first.addOperation(a)
        blockThread(milliseconds: 10)
        #expect(!b.isFinished)
        gate.open()
        second.waitUntilAllOperationsAreFinished()
        #expect(log.all == ["a", "b"])
    }

    @Test func finishedDependenciesStayListedUntilRemoved() {
        let a = BlockOp {}
        let b = BlockOp {}
        b.addDependency(a)
        a.start()
        b.start()
        #expect(b.dependencies.count == 1)
        b.removeDependency(a)
        #expect(b.dependencies.isEmpty)
    }

    @Test func removingAnUnfinishedDependencyMakesTheOperationReady() {
        let a = BlockOp {}
        let b = BlockOp {}
        b.addDependency(a)
        #expect(!b.isReady)
        b.removeDependency(a)
        #expect(b.isReady)
        b.start()
        #expect(b.isFinished)
        #expect(!a.isFinished)
    }

    @Test func removingAnUnfinishedDependencyLetsTheQueueStartTheOperation() {
        // Foundation on Linux hangs here: its count of unfinished dependencies stays too high.
        let queue = OpQueue()
        let never = BlockOp {}
        let b = BlockOp {}
        b.addDependency(never)
        queue.addOperation(b)
        blockThread(milliseconds: 5)
        #expect(!b.isFinished)
        b.removeDependency(never)
        queue.waitUntilAllOperationsAreFinished()
        #expect(b.isFinished)
    }

    @Test func removingADependencyThatIsNotThereDoesNothing() {
        let a = BlockOp {}
        let b = BlockOp {}
        b.removeDependency(a)
        #expect(b.dependencies.isEmpty)
        #expect(b.isReady)
    }

    @Test func addingTheSameDependencyTwiceHasNoEffect() {
        let a = BlockOp {}
        let b = BlockOp {}
        b.addDependency(a)
        b.addDependency(a)
        #expect(b.dependencies.count == 1)
        a.start()
        #expect(b.isReady)
    }

    @Test func addingADependencyToAnExecutingOperationHasNoEffect() {
        let started = Gate()
        let proceed = Gate()
        let queue = OpQueue()
        let b = BlockOp { started.open(); proceed.wait() }
        queue.addOperation(b)
        #expect(started.wait())
        let never = BlockOp {}
        b.addDependency(never)
        #expect(b.dependencies.count == 1)
        proceed.open()
        b.waitUntilFinished()
        #expect(b.isFinished)
    }

    @Test func aDependencyAddedAfterEnqueueingHoldsBackAWaitingOperation() {
        let queue = OpQueue()
        queue.isSuspended = true
        let a = BlockOp {}
        let b = BlockOp {}
        queue.addOperation(b)
        b.addDependency(a)
        queue.isSuspended = false
        blockThread(milliseconds: 10)
        #expect(!b.isFinished)
        a.start()
        b.waitUntilFinished()
        #expect(b.isFinished)
    }

    @Test func fanOutAndFanInRunInDependencyOrder() {
        let queue = OpQueue()
        let log = EventLog<Int>()
        let root = BlockOp { log.append(0) }
        let middle = (1...50).map { index in BlockOp { log.append(index) } }
        let sink = BlockOp { log.append(99) }
        for op in middle {
            op.addDependency(root)
            sink.addDependency(op)
        }
        queue.addOperations([sink] + middle + [root], waitUntilFinished: true)
        let events = log.all
        #expect(events.count == 52)
        #expect(events.first == 0)
        #expect(events.last == 99)
    }

    @Test func longChainRunsInOrder() {
        let queue = OpQueue()
        let log = EventLog<Int>()
        var ops: [Op] = []
        for index in 0..<2_000 {
            let op = BlockOp { log.append(index) }
            if let previous = ops.last { op.addDependency(previous) }
            ops.append(op)
        }
        queue.addOperations(ops.reversed(), waitUntilFinished: true)
        #expect(log.all == Array(0..<2_000))
    }
}
