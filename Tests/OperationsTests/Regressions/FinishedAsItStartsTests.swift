import Testing
import Dispatch
@testable import Operations

/// An `AsyncOp` finished by a handler of its own start (found by the model-based test): its body
/// does not run, and its observers hear `willFinish` and `didFinish` without a `willExecute`,
/// never a `willExecute` after `willFinish`.
@Suite(.timeLimit(.minutes(1)))
struct FinishedAsItStartsTests {
    @Test func anAsyncOpFinishedByAHandlerOfItsStartSkipsItsBody() async {
        let outcome: (events: [String], bodyRan: Bool, finished: Bool) = await onOwnThread {
            let op = FinishedByDidCancelOp()
            let log = EventLog<String>()
            op.addObserver(BlockObserver(
                willExecute: { _ in log.append("willExecute") },
                didCancel: { _, _ in log.append("didCancel") },
                willFinish: { _, _ in log.append("willFinish") },
                didFinish: { _, _ in log.append("didFinish") }))
            // A handler of the start cancels it; its didCancel observer then finishes it.
            let observation = op.observe(\.isExecuting, options: [.new]) { op, change in
                if change.newValue == true { op.cancel() }
            }
            let queue = OpQueue()
            queue.addOperation(op)
            queue.waitUntilAllOperationsAreFinished()
            eventually { log.all.last == "didFinish" }
            observation.invalidate()
            return (log.all, op.bodyRan.withLockedValue { $0 }, op.isFinished)
        }
        #expect(outcome.finished)
        #expect(!outcome.bodyRan, "the body ran after its operation had finished")
        #expect(outcome.events == ["didCancel", "willFinish", "didFinish"])
    }

    @Test func observersNeverHearWillExecuteAfterWillFinish() async {
        // Cancelled from another thread as it starts: whichever comes first, the callbacks keep
        // their order, and without `willExecute` the body never runs. (After `willExecute`, the
        // body runs even if the other thread finished the operation meanwhile: it may run after
        // this check, so the check does not ask for it.)
        let problems: [String] = await onOwnThread {
            var problems: [String] = []
            // Each round waits for a worker of the shared pool, which other tests keep busy in a
            // full run (under the sanitizer, 500 rounds outlasted the suite's minute): after 20 s,
            // the rounds done (at least 50) are enough.
            let deadline = ContinuousClock.now + .seconds(20)
            for round in 0..<500 {
                if round >= 50, ContinuousClock.now > deadline { break }
                let op = FinishedByDidCancelOp()
                let log = EventLog<String>()
                op.addObserver(BlockObserver(
                    willExecute: { _ in log.append("willExecute") },
                    willFinish: { _, _ in log.append("willFinish") },
                    didFinish: { _, _ in log.append("didFinish") }))
                let queue = OpQueue()
                queue.addOperation(op)
                op.cancel()
                queue.waitUntilAllOperationsAreFinished()
                eventually { log.all.last == "didFinish" }
                let events = log.all
                let ran = op.bodyRan.withLockedValue { $0 }
                if events.suffix(2) != ["willFinish", "didFinish"] || (!events.contains("willExecute") && ran) {
                    problems.append("\(events), body ran: \(ran)")
                }
            }
            return problems
        }
        #expect(problems.isEmpty)
    }
}

/// An `AsyncOp` that its own `didCancel` observer finishes while it executes; its body only
/// records that it ran.
private final class FinishedByDidCancelOp: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: `bodyRan` is a locked box.
    let bodyRan = LockedBox(false)

    override init() {
        super.init()
        addObserver(BlockObserver(didCancel: { operation, _ in
            guard operation.isExecuting, let operation = operation as? FinishedByDidCancelOp else { return }
            operation.finish()
        }))
    }

    override func execute() {
        bodyRan.withLockedValue { $0 = true }
    }
}
