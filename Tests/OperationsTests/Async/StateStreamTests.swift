import Testing
import Dispatch
@testable import Operations

@Suite struct StateStreamTests {
    private func collect(_ stream: AsyncStream<Op.StateChange>) async -> [Op.StateChange] {
        var changes: [Op.StateChange] = []
        for await change in stream { changes.append(change) }
        return changes
    }

    @Test func changesYieldsTransitionsInOrderAndEndsWhenFinished() async {
        let dependency = BlockOp {}
        let op = BlockOp {}
        op.addDependency(dependency)
        let stream = op.changes
        let queue = OpQueue()
        queue.addOperation(op)
        dependency.start()
        #expect(await collect(stream) == [.ready, .executing, .finished])
    }

    @Test func aCancelledOperationReportsCancellationThenFinish() async {
        let queue = OpQueue()
        queue.isSuspended = true
        let op = BlockOp {}
        queue.addOperation(op)
        let stream = op.changes
        op.cancel()
        queue.isSuspended = false
        #expect(await collect(stream) == [.cancelled, .finished])
    }

    @Test func aFinishedOperationHasAnEmptySequence() async {
        let op = BlockOp {}
        op.start()
        #expect(await collect(op.changes).isEmpty)
    }

    @Test func aSlowConsumerDoesNotHoldTheQueueBack() async {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let ops = (0..<20).map { _ in BlockOp {} }
        let streams = ops.map(\.changes)
        await queue.addOperations(ops, waitUntilFinished: true)   // nobody has read anything yet
        for stream in streams {
            #expect(await collect(stream) == [.executing, .finished])
        }
    }

    @Test func queueEventsReportStartsFinishesAndCounts() async {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        queue.isSuspended = true
        let events = queue.events()
        let a = BlockOp {}
        a.name = "a"
        let b = BlockOp {}
        b.name = "b"
        await queue.addOperations([a, b], waitUntilFinished: false)
        queue.isSuspended = false
        var seen: [String] = []
        for await event in events {
            seen.append(event.description)
            if case .operationCountChanged(0) = event { break }
        }
        #expect(seen == [
            "operationCount 2",
            "started BlockOp \"a\"", "finished BlockOp \"a\"", "operationCount 1",
            "started BlockOp \"b\"", "finished BlockOp \"b\"", "operationCount 0",
        ])
    }

    @Test func queueEventsCanKeepOnlyTheNewest() async {
        let queue = OpQueue()
        let events = queue.events(bufferingPolicy: .bufferingNewest(1))
        await queue.addOperations((0..<50).map { _ in BlockOp {} }, waitUntilFinished: true)
        // 150 events happened while nobody read; only the newest is kept (the last few may still
        // be on their way from the thread that delivers them).
        var reads = 0
        for await event in events {
            reads += 1
            if case .operationCountChanged(0) = event { break }
        }
        #expect(reads < 10)
    }
}
