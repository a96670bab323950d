import Testing
import Foundation
@testable import Operations

/// `OpObserver.didExecute(_:)`: the body returned, always between `willExecute` and `willFinish`.
@Suite struct DidExecuteTests {
    /// Records every callback it gets, by name.
    private struct Recorder: OpObserver {
        let log: EventLog<String>
        func willExecute(_ operation: Op) { log.append("willExecute") }
        func didExecute(_ operation: Op) { log.append("didExecute") }
        func didCancel(_ operation: Op, error: (any Error)?) { log.append("didCancel") }
        func willFinish(_ operation: Op, error: (any Error)?) { log.append("willFinish") }
        func didFinish(_ operation: Op, error: (any Error)?) { log.append("didFinish") }
    }

    /// A callback-style operation: `execute()` starts the work and returns; `finish()` comes later,
    /// from `finishing`, unless `finishesInside`.
    private final class CallbackOp: AsyncOp, @unchecked Sendable {
        // @unchecked Sendable: the log and the gate are thread-safe; `finishesInside` is immutable.
        let log: EventLog<String>
        let finishesInside: Bool
        let finishing = Gate()

        init(log: EventLog<String>, finishesInside: Bool) {
            self.log = log
            self.finishesInside = finishesInside
            super.init()
        }

        override func execute() {
            log.append("execute")
            if finishesInside {
                finish()
            } else {
                Thread { [self] in
                    finishing.wait()
                    log.append("callback")
                    finish()
                }.start()
            }
        }
    }

    @Test func aSynchronousBodyIsFollowedByDidExecuteThenTheFinish() async {
        let log = EventLog<String>()
        let op = BlockOp { log.append("body") }
        op.addObserver(Recorder(log: log))
        await OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(log.all == ["willExecute", "body", "didExecute", "willFinish", "didFinish"])
    }

    @Test func anAsyncBodyHearsItWhenTheBodyReturnsNotWhenItsTaskStarts() async {
        let log = EventLog<String>()
        let op = AsyncBlockOp<Int> {
            log.append("body starts")
            await Task.yield()
            log.append("body returns")
            return 1
        }
        op.addObserver(Recorder(log: log))
        await OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(log.all == ["willExecute", "body starts", "body returns", "didExecute", "willFinish", "didFinish"])
    }

    @Test func aCallbackOperationHearsItAsExecuteReturnsBeforeItFinishes() async {
        let log = EventLog<String>()
        let op = CallbackOp(log: log, finishesInside: false)
        op.addObserver(Recorder(log: log))
        OpQueue().addOperation(op)
        #expect(await eventuallyAsync { log.all.contains("didExecute") })
        #expect(op.isExecuting)
        op.finishing.open()
        #expect(await eventuallyAsync { op.isFinished })
        #expect(await eventuallyAsync { log.count == 6 })
        #expect(log.all == ["willExecute", "execute", "didExecute", "callback", "willFinish", "didFinish"])
    }

    @Test func aCallbackOperationThatFinishesInsideExecuteHearsItOnceBeforeWillFinish() async {
        let log = EventLog<String>()
        let op = CallbackOp(log: log, finishesInside: true)
        op.addObserver(Recorder(log: log))
        await OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(await eventuallyAsync { log.count == 5 })
        #expect(log.all == ["willExecute", "execute", "didExecute", "willFinish", "didFinish"])
    }

    @Test func anOperationCancelledBeforeItRanNeverHearsIt() async {
        let log = EventLog<String>()
        let op = BlockOp { log.append("body") }
        op.addObserver(Recorder(log: log))
        op.cancel()
        await OpQueue().addOperations([op], waitUntilFinished: true)
        #expect(log.all == ["didCancel", "willFinish", "didFinish"])
    }

    @Test func aManualStartAndABlockObserverHearIt() async {
        let log = EventLog<String>()
        let op = BlockOp { log.append("body") }
        op.addObserver(BlockObserver(didExecute: { _ in log.append("didExecute") }))
        await onOwnThread { op.start() }
        #expect(log.all == ["body", "didExecute"])
    }
}
