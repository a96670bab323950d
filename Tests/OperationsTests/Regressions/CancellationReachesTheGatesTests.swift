import Testing
import Dispatch
import Foundation
@testable import Operations

/// Cancelling an operation reaches the work started on its behalf to pass its gates: the task of
/// its `async` conditions is cancelled at once, and a `start()` called by hand that waits for a
/// condition or a category returns, the operation finished cancelled (issue 22, defect 18).
@Suite struct CancellationReachesTheGatesTests {
    private final class WeakBox: @unchecked Sendable {
        // @unchecked Sendable: written once before it is shared; reading a weak reference is safe.
        weak var object: Op?
    }

    /// Runs `body` on a thread of its own and opens the returned gate when it returns.
    private func onThread(_ body: @escaping @Sendable () -> Void) -> Gate {
        let returned = Gate()
        let thread = Thread {
            body()
            returned.open()
        }
        thread.start()
        return returned
    }

    @Test func cancellingCancelsTheTaskOfAnAsyncConditionAndReleasesTheOperation() async {
        let evaluating = Gate()
        let sawCancellation = Gate()
        let weak = WeakBox()
        let queue = OpQueue()
        do {
            let op = BlockOp {}
            op.addCondition(.evaluate("wait until reachable") { _ in
                evaluating.open()
                do {
                    try await Task.sleep(for: .seconds(3600))
                } catch {
                    sawCancellation.open()
                    throw error
                }
                return true
            })
            weak.object = op
            queue.addOperation(op)
            #expect(await evaluating.waitOffThread())
            op.cancel()
            #expect(await sawCancellation.waitOffThread(seconds: 5), "the condition's task was not cancelled")
            await op.waitUntilFinished()
            #expect(op.isCancelled)
        }
        await queue.waitUntilAllOperationsAreFinished()
        #expect(await eventuallyAsync(seconds: 5) { weak.object == nil }, "the condition's task keeps the operation alive")
    }

    @Test func cancelReleasesAManualStartWaitingForAnAsyncCondition() async {
        let evaluating = Gate()
        let checkMayReturn = Gate()
        let ran = EventLog<Bool>()
        let op = BlockOp { ran.append(true) }
        // A check that ignores cancellation: the start must not wait for it anyway.
        op.addCondition(.evaluate("slow") { _ in
            evaluating.open()
            _ = await checkMayReturn.waitOffThread(seconds: 30)
            return true
        })
        let returned = onThread { op.start() }
        #expect(await evaluating.waitOffThread())
        op.cancel()
        #expect(await returned.waitOffThread(seconds: 5), "start() waited for the condition")
        #expect(op.isFinished && op.isCancelled)
        checkMayReturn.open()
        try? await Task.sleep(for: .milliseconds(20))
        #expect(ran.all.isEmpty)
    }

    @Test func cancelReleasesAManualStartWaitingForACategory() async {
        let category = uniqueToken("manual-cancel")
        let holderStarted = Gate()
        let release = Gate()
        let holder = BlockOp {
            holderStarted.open()
            release.wait()
        }
        holder.addCondition(.mutuallyExclusive(category))
        let queue = OpQueue()
        queue.addOperation(holder)
        #expect(await holderStarted.waitOffThread())
        let ran = EventLog<Bool>()
        let manual = BlockOp { ran.append(true) }
        manual.addCondition(.mutuallyExclusive(category))
        let returned = onThread { manual.start() }
        #expect(await eventuallyAsync(seconds: 5) { manual.withState { $0.gate } == .waitingForExclusivity })
        manual.cancel()
        #expect(await returned.waitOffThread(seconds: 5), "start() waited for the category")
        #expect(manual.isFinished && manual.isCancelled)
        #expect(Exclusivity.holders(of: category).map(ObjectIdentifier.init) == [ObjectIdentifier(holder)])
        release.open()
        await queue.waitUntilAllOperationsAreFinished()
        #expect(ran.all.isEmpty)
        #expect(Exclusivity.holders(of: category).isEmpty)
    }

    @Test func aCancelledOperationWaitingForACategoryKeepsNobodyWaitingWhileItWaitsForASlot() async {
        let category = uniqueToken("cancelled-waiter")
        let log = EventLog<String>()
        let holderStarted = Gate()
        let releaseHolder = Gate()
        let holder = BlockOp {
            holderStarted.open()
            releaseHolder.wait()
            log.append("holder")
        }
        holder.addCondition(.mutuallyExclusive(category))
        OpQueue().addOperation(holder)
        #expect(await holderStarted.waitOffThread())
        // Waits for the category in a serial queue, whose slot is then taken for long.
        let serial = OpQueue()
        serial.maxConcurrentOperationCount = 1
        let cancelled = BlockOp { log.append("cancelled") }
        cancelled.addCondition(.mutuallyExclusive(category))
        serial.addOperation(cancelled)
        #expect(await eventuallyAsync(seconds: 5) { cancelled.withState { $0.gate } == .waitingForExclusivity })
        let busyStarted = Gate()
        let busy = Gate()
        serial.addOperation {
            busyStarted.open()
            busy.wait()
        }
        #expect(await busyStarted.waitOffThread())
        let other = OpQueue()
        let next = BlockOp { log.append("next") }
        next.addCondition(.mutuallyExclusive(category))
        other.addOperation(next)
        #expect(await eventuallyAsync(seconds: 5) { next.withState { $0.gate } == .waitingForExclusivity })
        cancelled.cancel()
        releaseHolder.open()
        #expect(await eventuallyAsync(seconds: 5) { next.isFinished }, "the cancelled operation kept its place until its queue could start it")
        busy.open()
        await serial.waitUntilAllOperationsAreFinished()
        await other.waitUntilAllOperationsAreFinished()
        #expect(log.all == ["holder", "next"])
        #expect(cancelled.isFinished && cancelled.isCancelled)
        #expect(Exclusivity.holders(of: category).isEmpty)
    }
}
