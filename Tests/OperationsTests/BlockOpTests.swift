import Dispatch
import Testing
@testable import Operations

/// A meeting point for `count` threads: each one that arrives waits until all have arrived.
/// If the participants ran one after another, the first would never see the others arrive.
private final class Rendezvous: Sendable {
    private let count: Int
    private let arrived = LockedBox(0)
    private let allArrived = DispatchSemaphore(value: 0)

    init(count: Int) {
        self.count = count
    }

    /// Arrives and waits for the others; returns `false` if they did not all arrive in time.
    func arriveAndWait(seconds: Int = 5) -> Bool {
        let number = arrived.withLockedValue { value -> Int in
            value += 1
            return value
        }
        if number == count {
            for _ in 0..<count { allArrived.signal() }
        }
        return allArrived.wait(timeout: .now() + .seconds(seconds)) == .success
    }
}

@Suite struct BlockOpTests {
    // MARK: Concurrency of the blocks

    @Test func blocksRunConcurrentlyWhenStartedByHand() {
        let blockCount = 4
        let rendezvous = Rendezvous(count: blockCount)
        let met = EventLog<Bool>()
        let op = BlockOp()
        for _ in 0..<blockCount {
            op.addExecutionBlock { met.append(rendezvous.arriveAndWait()) }
        }
        op.start()
        #expect(op.isFinished)
        #expect(met.all == Array(repeating: true, count: blockCount))
    }

    @Test func blocksRunConcurrentlyEvenInAWidthOneQueue() {
        let blockCount = 6
        let rendezvous = Rendezvous(count: blockCount)
        let met = EventLog<Bool>()
        let op = BlockOp { met.append(rendezvous.arriveAndWait()) }
        for _ in 1..<blockCount {
            op.addExecutionBlock { met.append(rendezvous.arriveAndWait()) }
        }
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        queue.addOperation(op)
        op.waitUntilFinished()
        #expect(met.all == Array(repeating: true, count: blockCount))
    }

    @Test func firstBlockRunsOnTheThreadThatStartsTheOperation() {
        let marker = ThreadLocal<BlockOp>()
        let sawStarter = EventLog<Bool>()
        let op = BlockOp()
        // Unowned: an operation keeps its blocks, so a block that held it would keep it alive.
        op.addExecutionBlock { [unowned op] in sawStarter.append(marker.value === op) }
        marker.withValue(op) {
            op.start()
        }
        #expect(sawStarter.all == [true])
    }

    @Test func everyBlockRunsExactlyOnce() {
        let blockCount = 32
        let ran = EventLog<Int>()
        let op = BlockOp()
        for index in 0..<blockCount {
            op.addExecutionBlock { ran.append(index) }
        }
        op.start()
        #expect(ran.all.sorted() == Array(0..<blockCount))
    }

    @Test func operationFinishesOnlyAfterTheLastBlockReturns() {
        let log = EventLog<String>()
        let quickDone = Gate()
        let slowStarted = Gate()
        let releaseSlow = Gate()
        let op = BlockOp {
            log.append("quick block returns")
            quickDone.open()
        }
        op.addExecutionBlock {
            slowStarted.open()
            #expect(releaseSlow.wait())
            log.append("slow block returns")
        }
        let token = op.observe(\.isFinished, options: [.new]) { _, _ in
            log.append("finished")
        }
        let queue = OpQueue()
        queue.addOperation(op)
        #expect(quickDone.wait())
        #expect(slowStarted.wait())
        // One block has returned, the other is still running: the operation is still executing.
        #expect(op.isExecuting)
        #expect(!op.isFinished)
        releaseSlow.open()
        op.waitUntilFinished()
        #expect(log.all == ["quick block returns", "slow block returns", "finished"])
        token.invalidate()
    }

    @Test func writesOfEveryBlockAreVisibleWhenTheOperationFinishes() {
        let blockCount = 8
        let slots = LockedBox(Array(repeating: false, count: blockCount))
        let op = BlockOp()
        for index in 0..<blockCount {
            op.addExecutionBlock { slots.withLockedValue { $0[index] = true } }
        }
        let queue = OpQueue()
        queue.addOperations([op], waitUntilFinished: true)
        #expect(slots.withLockedValue { $0 } == Array(repeating: true, count: blockCount))
    }

    // MARK: executionBlocks

    @Test func executionBlocksListsTheBlocksInTheOrderTheyWereAdded() {
        let ran = EventLog<Int>()
        let op = BlockOp { ran.append(0) }
        op.addExecutionBlock { ran.append(1) }
        op.addExecutionBlock { ran.append(2) }
        let blocks = op.executionBlocks
        #expect(blocks.count == 3)
        for block in blocks { block() }
        #expect(ran.all == [0, 1, 2])
    }

    @Test func emptyBlockOpHasNoBlocksAndFinishesWhenStarted() {
        let op = BlockOp()
        #expect(op.executionBlocks.isEmpty)
        op.start()
        #expect(op.isFinished)
    }

    @Test func blockAddedWhileWaitingInAQueueRuns() {
        let queue = OpQueue()
        queue.isSuspended = true
        let ran = EventLog<String>()
        let op = BlockOp { ran.append("first") }
        queue.addOperation(op)
        op.addExecutionBlock { ran.append("second") }
        queue.isSuspended = false
        op.waitUntilFinished()
        #expect(ran.all.sorted() == ["first", "second"])
    }

    @Test func cancelledBlockOpRunsNoBlock() {
        let ran = EventLog<Int>()
        let op = BlockOp { ran.append(0) }
        op.addExecutionBlock { ran.append(1) }
        op.cancel()
        op.start()
        #expect(op.isFinished)
        #expect(ran.count == 0)
    }

    // MARK: Misuse

    @Test(.oneExitTestAtATime) func addingABlockToAFinishedBlockOpTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = BlockOp {}
            op.name = "finished-thumbnails"
            op.start()
            op.addExecutionBlock {}
        }
        expectStandardError(of: result, toContain: ["finished-thumbnails", "addExecutionBlock"])
    }

    @Test(.oneExitTestAtATime) func addingABlockToAnExecutingBlockOpTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = BlockOp()
            op.name = "running-thumbnails"
            op.addExecutionBlock { [op] in
                op.addExecutionBlock {}
            }
            op.start()
        }
        expectStandardError(of: result, toContain: ["running-thumbnails", "addExecutionBlock"])
    }
}
