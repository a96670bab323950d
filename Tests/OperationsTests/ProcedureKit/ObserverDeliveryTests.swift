import Testing
@testable import Operations

/// `delivered(on:)` and `delivered(to:)`: an observer's `did` callbacks run on a queue or an
/// actor of your choice, in order; its `will` callbacks stay where the operation waits for them.
@Suite struct ObserverDeliveryTests {
    private actor Journal {
        private(set) var entries: [String] = []
        func append(_ entry: String) { entries.append(entry) }
    }

    @Test func didCallbacksRunAsOperationsOfTheChosenQueue() async {
        let log = EventLog<String>()
        let observersQueue = OpQueue()
        observersQueue.name = "observers"
        observersQueue.maxConcurrentOperationCount = 1
        let work = OpQueue()
        work.name = "work"
        let op = BlockOp {}
        op.addObserver(BlockObserver(
            willExecute: { _ in log.append("willExecute on \(OpQueue.current?.name ?? "-")") },
            didExecute: { _ in log.append("didExecute on \(OpQueue.current?.name ?? "-")") },
            didFinish: { _, _ in log.append("didFinish on \(OpQueue.current?.name ?? "-")") }
        ).delivered(on: observersQueue))
        await work.addOperations([op], waitUntilFinished: true)
        #expect(await eventuallyAsync { log.count == 3 })
        #expect(log.all == ["willExecute on work", "didExecute on observers", "didFinish on observers"])
    }

    @Test func didCallbacksRunOnTheChosenActorInOrder() async {
        let journal = Journal()
        let ops = (0..<20).map { index in
            let op = BlockOp {}
            op.name = "op\(index)"
            return op
        }
        let recorder = BlockObserver(
            didAttach: { op in journal.assumeIsolated { $0.append("attach \(op.name!)") } },
            didExecute: { op in journal.assumeIsolated { $0.append("execute \(op.name!)") } },
            didFinish: { op, _ in journal.assumeIsolated { $0.append("finish \(op.name!)") } }
        ).delivered(to: journal)
        for op in ops { op.addObserver(recorder) }
        await OpQueue().addOperations(ops, waitUntilFinished: true)
        #expect(await eventuallyAsync { await journal.entries.count == 60 })
        let entries = await journal.entries
        for op in ops {
            let mine = entries.filter { $0.hasSuffix(" \(op.name!)") }
            #expect(mine == ["attach \(op.name!)", "execute \(op.name!)", "finish \(op.name!)"], "in the order of the events")
        }
    }
}
