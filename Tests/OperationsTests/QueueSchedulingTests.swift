import Testing
import Dispatch
@testable import Operations

@Suite struct QueueSchedulingTests {
    @Test func highestPriorityReadyOperationStartsFirstAndEqualsAreFIFO() {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        queue.isSuspended = true
        let log = EventLog<String>()
        let specs: [(String, Op.QueuePriority)] = [
            ("low1", .low), ("normal1", .normal), ("veryHigh", .veryHigh), ("low2", .low),
            ("high1", .high), ("normal2", .normal), ("veryLow", .veryLow), ("high2", .high),
        ]
        for (name, priority) in specs {
            let op = BlockOp { log.append(name) }
            op.queuePriority = priority
            queue.addOperation(op)
        }
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(log.all == ["veryHigh", "high1", "high2", "normal1", "normal2", "low1", "low2", "veryLow"])
    }

    @Test func readyLowPriorityStartsBeforeBlockedHighPriority() {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let log = EventLog<String>()
        let blocker = BlockOp {}
        let high = BlockOp { log.append("high") }
        high.queuePriority = .veryHigh
        high.addDependency(blocker)
        let low = BlockOp { log.append("low") }
        low.queuePriority = .veryLow
        queue.addOperations([high, low], waitUntilFinished: false)
        low.waitUntilFinished()
        #expect(log.all == ["low"])
        blocker.start()
        queue.waitUntilAllOperationsAreFinished()
        #expect(log.all == ["low", "high"])
    }

    @Test func dependentsThatBecomeReadyTogetherStartInPriorityOrder() {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let log = EventLog<String>()
        let trigger = BlockOp {}
        let specs: [(String, Op.QueuePriority)] = [("low", .low), ("veryHigh", .veryHigh), ("normal", .normal), ("high", .high)]
        var dependents: [Op] = []
        for (name, priority) in specs {
            let op = BlockOp { log.append(name) }
            op.queuePriority = priority
            op.addDependency(trigger)
            dependents.append(op)
        }
        queue.addOperations(dependents, waitUntilFinished: false)
        trigger.start()
        queue.waitUntilAllOperationsAreFinished()
        #expect(log.all == ["veryHigh", "high", "normal", "low"])
    }

    @Test func changingAnEnqueuedOperationsPriorityTakesEffect() {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        queue.isSuspended = true
        let log = EventLog<String>()
        let first = BlockOp { log.append("first") }
        let second = BlockOp { log.append("second") }
        queue.addOperations([first, second], waitUntilFinished: false)
        second.queuePriority = .veryHigh
        first.queuePriority = .veryLow
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(log.all == ["second", "first"])
    }

    @Test func widthOneRunsOneAtATime() {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let meter = ConcurrencyMeter()
        for _ in 0..<20 {
            queue.addOperation {
                meter.enter()
                blockThread(milliseconds: 1)
                meter.leave()
            }
        }
        queue.waitUntilAllOperationsAreFinished()
        #expect(meter.peak == 1)
        #expect(meter.total == 20)
    }

    @Test func queueOfWidthNRunsNBlockingOperationsAtOnce() {
        // Each operation waits until all of them have started: this only passes if the queue
        // really runs `width` blocking operations side by side (the pool adds threads).
        let width = 6
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = width
        let arrived = LockedBox(0)
        let allArrived = Gate()
        let meter = ConcurrencyMeter()
        let timedOut = LockedBox(false)
        for _ in 0..<width {
            queue.addOperation {
                meter.enter()
                let count = arrived.withLockedValue { $0 += 1; return $0 }
                if count == width {
                    for _ in 0..<width { allArrived.open() }
                }
                if !allArrived.wait(seconds: 10) { timedOut.withLockedValue { $0 = true } }
                meter.leave()
            }
        }
        queue.waitUntilAllOperationsAreFinished()
        #expect(!timedOut.withLockedValue { $0 })
        #expect(meter.peak == width)
    }

    @Test func widthIsNeverExceededWithBlockingOperations() {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 3
        let meter = ConcurrencyMeter()
        for _ in 0..<30 {
            queue.addOperation {
                meter.enter()
                blockThread(milliseconds: 5)
                meter.leave()
            }
        }
        queue.waitUntilAllOperationsAreFinished()
        #expect(meter.peak <= 3)
        #expect(meter.total == 30)
    }

    @Test func defaultWidthRunsManyBlockingOperationsTogether() {
        let count = 40
        let queue = OpQueue()
        let arrived = LockedBox(0)
        let allArrived = Gate()
        let timedOut = LockedBox(false)
        for _ in 0..<count {
            queue.addOperation {
                if arrived.withLockedValue({ $0 += 1; return $0 }) == count {
                    for _ in 0..<count { allArrived.open() }
                }
                if !allArrived.wait(seconds: 10) { timedOut.withLockedValue { $0 = true } }
            }
        }
        queue.waitUntilAllOperationsAreFinished()
        #expect(!timedOut.withLockedValue { $0 })
    }

    @Test func raisingTheWidthStartsMoreOperations() {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let release = Gate()
        let secondStarted = Gate()
        let firstStarted = Gate()
        queue.addOperation { firstStarted.open(); release.wait() }
        queue.addOperation { secondStarted.open() }
        #expect(firstStarted.wait())
        #expect(!secondStarted.wait(seconds: 0))
        queue.maxConcurrentOperationCount = 2
        #expect(secondStarted.wait())
        release.open()
        queue.waitUntilAllOperationsAreFinished()
    }

    @Test func operationsListsMembersInInsertionOrder() {
        let queue = OpQueue()
        queue.isSuspended = true
        let ops = (0..<5).map { _ in BlockOp {} }
        queue.addOperations(ops, waitUntilFinished: false)
        #expect(queue.operations.count == 5)
        #expect(zip(queue.operations, ops).allSatisfy { $0 === $1 })
        #expect(queue.operationCount == 5)
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(queue.operations.isEmpty)
        #expect(queue.operationCount == 0)
    }

    @Test func operationsAddedFromInsideAnOperationRun() {
        let queue = OpQueue()
        let inner = Gate()
        queue.addOperation {
            OpQueue.current!.addOperation { inner.open() }
        }
        #expect(inner.wait())
        queue.waitUntilAllOperationsAreFinished()
    }

    @Test func anOperationCanWaitForOperationsItAddsToItsOwnQueue() {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 2
        let done = LockedBox(0)
        queue.addOperation {
            let children = (0..<3).map { _ in BlockOp { done.withLockedValue { $0 += 1 } } }
            OpQueue.current!.addOperations(children, waitUntilFinished: true)
        }
        queue.waitUntilAllOperationsAreFinished()
        #expect(done.withLockedValue { $0 } == 3)
    }

    @Test func defaultSettingsMatchFoundation() {
        let queue = OpQueue()
        #expect(queue.maxConcurrentOperationCount == OpQueue.defaultMaxConcurrentOperationCount)
        #expect(OpQueue.defaultMaxConcurrentOperationCount == -1)
        #expect(!queue.isSuspended)
        #expect(queue.underlyingQueue == nil)
        #expect(queue.qualityOfService == .default)
        #expect(queue.name?.hasPrefix("OpQueue 0x") == true)
        queue.name = "downloads"
        #expect(queue.name == "downloads")
        #expect(queue.description == "OpQueue \"downloads\"")
    }
}

@Suite struct StaleEntryTests {
    private struct Weak: @unchecked Sendable {
        // @unchecked Sendable: read only by the test's thread after the queue is idle.
        weak var object: Op?
    }

    @Test func aStaleEntryDoesNotKeepAFinishedOperationAlive() {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        queue.isSuspended = true
        var weak = Weak()
        do {
            let op = BlockOp { OpQueue.current?.isSuspended = true }
            weak.object = op
            queue.addOperation(op)
            op.queuePriority = .high       // a newer entry; the first one is stale
            queue.isSuspended = false
            op.waitUntilFinished()
        }
        #expect(eventually { weak.object == nil })
    }

    @Test func togglingPrioritiesWhileSuspendedStaysCorrect() {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        queue.isSuspended = true
        let log = EventLog<String>()
        let a = BlockOp { log.append("a") }
        let b = BlockOp { log.append("b") }
        queue.addOperations([a, b], waitUntilFinished: false)
        for round in 0..<1_000 {
            a.queuePriority = round.isMultiple(of: 2) ? .high : .low
            b.queuePriority = round.isMultiple(of: 2) ? .low : .high
        }
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(log.all == ["b", "a"])   // the last round left b high
    }
}
