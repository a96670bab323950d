import Testing
import Dispatch
import Foundation
@testable import Operations

/// Issue 22, defects 2 and 4: what a callback does to the object it observes (finish it, wait for
/// it, observe it again) works from every callback, or traps with an explanation; it never hangs
/// and never crashes.
@Suite(.timeLimit(.minutes(2)))
struct ObserverReentrancyTests {

    // MARK: Defect 2: finish() and waits from didCancel

    @Test func finishFromADidCancelObserverFinishesTheOperation() async {
        let log = EventLog<String>()
        let op = ReentrancyOp()
        op.addObserver(BlockObserver(
            willExecute: { _ in log.append("willExecute") },
            didCancel: { op, _ in
                log.append("didCancel")
                (op as! AsyncOp).finish()
                log.append("finish returned")
            },
            willFinish: { _, _ in log.append("willFinish") },
            didFinish: { _, _ in log.append("didFinish") }
        ))
        let queue = OpQueue()
        queue.addOperation(op)
        let finished: Bool = await onOwnThread {
            guard op.started.wait(seconds: 10) else { return false }
            Thread.detachNewThread { op.cancel() }
            return reentrancyFinishes(op)
        }
        #expect(finished, "the operation never finished: finish() from didCancel hung")
        #expect(eventually { log.all.last == "didFinish" })
        // willFinish is delivered before finish() moves on, inside the didCancel handler; didFinish
        // after that handler returns.
        #expect(log.all == ["willExecute", "didCancel", "willFinish", "finish returned", "didFinish"])
    }

    @Test func aWaitFromADidCancelObserverReturnsOnceTheOperationFinishes() async {
        let log = EventLog<String>()
        let op = ReentrancyOp()
        op.addObserver(BlockObserver(
            didCancel: { op, _ in
                log.append("didCancel")
                op.waitUntilFinished()
                log.append("wait returned, finished: \(op.isFinished)")
            },
            willFinish: { _, _ in log.append("willFinish") },
            didFinish: { _, _ in log.append("didFinish") }
        ))
        OpQueue().addOperation(op)
        let finished: Bool = await onOwnThread {
            guard op.started.wait(seconds: 10) else { return false }
            let cancelling = Gate()
            Thread.detachNewThread {
                op.cancel()
                cancelling.open()
            }
            // The body's work ends on another thread while the handler waits.
            guard eventually({ log.all.contains("didCancel") }) else { return false }
            op.finish()
            return reentrancyFinishes(op) && cancelling.wait(seconds: 10)
        }
        #expect(finished, "the wait in didCancel hung")
        #expect(eventually { log.count == 4 })
        #expect(log.all == ["didCancel", "willFinish", "didFinish", "wait returned, finished: true"])
    }

    @Test func anIsCancelledObservationOfAnOperationWithObserversWaitingForItReturns() async {
        // One outbox carries both kinds of callback: a property observation that waits must not
        // keep the operation's OpObserver events (here the timeout's) from being delivered.
        let op = ReentrancyOp()
        op.timeout = .seconds(600)
        let waited = Gate()
        let observation = op.observe(\.isCancelled) { op, _ in
            op.waitUntilFinished()
            waited.open()
        }
        OpQueue().addOperation(op)
        let finished: Bool = await onOwnThread {
            guard op.started.wait(seconds: 10) else { return false }
            Thread.detachNewThread { op.cancel() }
            blockThread(milliseconds: 20)
            op.finish()
            return reentrancyFinishes(op) && waited.wait(seconds: 10)
        }
        #expect(finished, "the wait in the isCancelled handler hung")
        observation.invalidate()
    }

    @Test(.oneExitTestAtATime) func aWaitFromAWillFinishObserverOfTheOperationTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = BlockOp {}
            op.name = "finishing"
            op.addObserver(BlockObserver(willFinish: { op, _ in op.waitUntilFinished() }))
            OpQueue().addOperation(op)
            blockThread(milliseconds: 5_000)
        }
        expectStandardError(of: result, toContain: ["waitUntilFinished()", "BlockOp \"finishing\"", "observer handler", "never finish"])
    }

    @Test func aWaitFromADidFinishObserverReturnsWhenAnotherThreadsChangeKeptItsDeliveryBack() async {
        // Another thread's change of a property (queued first) keeps the `didFinish` back: the
        // finishing thread may then deliver it while it takes the completion block, before it
        // completes the operation. The wait in the handler must see the operation held up by its
        // own thread there (it returns at once), not wait for that thread to complete it (found
        // by the model-based test).
        let hangs: Int = await onOwnThread {
            for _ in 0..<500 {
                let op = BlockOp {}
                let returned = Gate()
                let observation = op.observe(\.queuePriority) { _, _ in }
                op.completionBlock = {}
                op.addObserver(BlockObserver(didFinish: { op, _ in
                    op.waitUntilFinished()
                    returned.open()
                }))
                OpQueue().addOperation(op)
                for _ in 0..<50 { op.queuePriority = op.queuePriority == .veryLow ? .veryHigh : .veryLow }
                guard returned.wait(seconds: 10) else { return 1 }
                observation.invalidate()
            }
            return 0
        }
        #expect(hangs == 0, "the wait in the didFinish handler never returned")
    }

    // MARK: Defect 4: observations registered inside handlers

    @Test func dependenciesObservedWithValuesFromInsideAnotherHandlerGetTheirValues() {
        let op = BlockOp {}
        let (first, second, third) = (BlockOp {}, BlockOp {}, BlockOp {})
        let inner = LockedBox<ObservationToken?>(nil)
        let changes = EventLog<[[ObjectIdentifier]?]>()
        let outer = op.observe(\.dependencies) { op, _ in
            guard inner.withLockedValue({ $0 }) == nil else { return }
            // Recorded without values (nobody asked for them yet), delivered after this handler.
            op.addDependency(second)
            let token = op.observe(\.dependencies, options: [.old, .new]) { _, change in
                changes.append([change.oldValue.map(reentrancyIDs), change.newValue.map(reentrancyIDs)])
            }
            inner.withLockedValue { $0 = token }
        }
        op.addDependency(first)
        op.addDependency(third)
        // The observation hears only of changes made after it was registered, with their values.
        #expect(changes.all == [[reentrancyIDs([first, second]), reentrancyIDs([first, second, third])]])
        outer.invalidate()
        inner.withLockedValue { $0?.invalidate() }
    }

    @Test func queueOperationsObservedWithValuesFromInsideAnotherHandlerGetTheirValues() {
        let queue = OpQueue()
        queue.isSuspended = true
        let (first, second, third) = (BlockOp {}, BlockOp {}, BlockOp {})
        let inner = LockedBox<ObservationToken?>(nil)
        let changes = EventLog<[[ObjectIdentifier]?]>()
        let outer = queue.observe(\.operationCount) { queue, _ in
            guard inner.withLockedValue({ $0 }) == nil else { return }
            queue.addOperation(second)
            let token = queue.observe(\.operations, options: [.old, .new]) { _, change in
                changes.append([change.oldValue.map(reentrancyIDs), change.newValue.map(reentrancyIDs)])
            }
            inner.withLockedValue { $0 = token }
        }
        // An observer of `operations` without values: changes are recorded without the lists.
        let plain = queue.observe(\.operations) { _, _ in }
        queue.addOperation(first)
        queue.addOperation(third)
        #expect(changes.all == [[reentrancyIDs([first, second]), reentrancyIDs([first, second, third])]])
        outer.invalidate()
        plain.invalidate()
        inner.withLockedValue { $0?.invalidate() }
        queue.isSuspended = false
        #expect(queueEmpties(queue))
    }

    @Test func observationsRegisteredWhileAnotherThreadDeliversGetOnlyLaterChangesWithValues() async {
        // Changes recorded without values by two threads (one delivers, slowly, while the other
        // records), while an observation that asks for values registers.
        let outcome: Bool = await onOwnThread {
            for _ in 0..<25 {
                let op = BlockOp {}
                let slow = op.observe(\.dependencies) { _, _ in blockThread(milliseconds: 1) }
                let stop = LockedBox(false)
                let adders = DispatchGroup()
                for _ in 0..<2 {
                    adders.enter()
                    Thread.detachNewThread {
                        // Bounded: one thread delivers what both record, a millisecond each.
                        for _ in 0..<60 where !stop.withLockedValue({ $0 }) { op.addDependency(BlockOp {}) }
                        adders.leave()
                    }
                }
                blockThread(milliseconds: 2)
                let seen = EventLog<Bool>()
                let token = op.observe(\.dependencies, options: [.old, .new]) { _, change in
                    seen.append(change.oldValue != nil && change.newValue != nil)
                }
                eventually(seconds: 1) { seen.count >= 5 }
                stop.withLockedValue { $0 = true }
                guard adders.wait(timeout: .now() + 10) == .success else { return false }
                #expect(seen.all.allSatisfy { $0 })
                token.invalidate()
                slow.invalidate()
            }
            return true
        }
        #expect(outcome)
    }
}

/// A callback-style asynchronous operation whose work ends when the test calls `finish()`.
final class ReentrancyOp: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: `started` is a Sendable gate.
    let started = Gate()

    override func execute() {
        started.open()
    }
}

/// Identities of operations, to compare lists by reference.
private func reentrancyIDs(_ operations: [Op]) -> [ObjectIdentifier] {
    operations.map(ObjectIdentifier.init)
}

/// Waits on another thread for `op`; `false` if it did not finish within the hang guard.
private func reentrancyFinishes(_ op: Op, seconds: Int = 10) -> Bool {
    let done = Gate()
    Thread.detachNewThread {
        op.waitUntilFinished()
        done.open()
    }
    return done.wait(seconds: seconds)
}
