import Dispatch
import Testing
@testable import Operations

/// A marker object stored in a thread-local slot, to tell which thread a handler runs on.
private final class ThreadMarker: Sendable {}

/// Holds a token so that a handler can reach (and invalidate) its own observation.
private final class TokenBox: Sendable {
    let token = LockedBox<ObservationToken?>(nil)
}

/// The events of a Bool property, as "name: old→new" (a missing value prints as "nil").
private func describe(_ name: String, _ change: ObservedChange<Bool>) -> String {
    let old = change.oldValue.map { String($0) } ?? "nil"
    let new = change.newValue.map { String($0) } ?? "nil"
    return "\(name): \(old)→\(new)\(change.isPrior ? " (prior)" : "")"
}

/// Identities of operations, to compare dependency lists by reference.
private func ids(_ operations: [Op]?) -> [ObjectIdentifier]? {
    operations?.map(ObjectIdentifier.init)
}

@Suite struct OpObservationTests {
    // MARK: Synchronous delivery

    @Test func dependentSeesReadyBeforeStartReturns() {
        let a = BlockOp {}
        let b = BlockOp {}
        b.addDependency(a)
        let log = EventLog<String>()
        let token = b.observe(\.isReady, options: [.old, .new]) { _, change in
            log.append(describe("isReady", change))
        }
        #expect(!b.isReady)
        a.start()
        // No waiting: the change was delivered on this thread before start() returned.
        #expect(log.all == ["isReady: false→true"])
        #expect(b.isReady)
        token.invalidate()
    }

    @Test func addingAnUnfinishedDependencyReportsNotReady() {
        let a = BlockOp {}
        let b = BlockOp {}
        let log = EventLog<String>()
        let token = b.observe(\.isReady, options: [.old, .new]) { _, change in
            log.append(describe("isReady", change))
        }
        b.addDependency(a)
        #expect(log.all == ["isReady: true→false"])
        b.addDependency(a)  // already there: no change
        #expect(log.all == ["isReady: true→false"])
        token.invalidate()
    }

    @Test func handlerRunsOnTheThreadThatMadeTheChange() {
        let marker = ThreadLocal<ThreadMarker>()
        let mine = ThreadMarker()
        let op = BlockOp {}
        let sawMarker = EventLog<Bool>()
        let token = op.observe(\.isCancelled, options: [.new]) { _, _ in
            sawMarker.append(marker.value === mine)
        }
        marker.withValue(mine) {
            op.cancel()
        }
        #expect(sawMarker.all == [true])
        token.invalidate()
    }

    @Test func changeMadeByAQueuedOperationIsDeliveredOnItsWorkerThread() {
        let queue = OpQueue()
        let observed = BlockOp {}
        let handlerQueues = EventLog<Bool>()
        let token = observed.observe(\.isCancelled, options: [.new]) { _, _ in
            // The body below runs with OpQueue.current set to `queue` on its worker thread.
            handlerQueues.append(OpQueue.current === queue)
        }
        let canceller = BlockOp { observed.cancel() }
        queue.addOperation(canceller)
        canceller.waitUntilFinished()
        #expect(handlerQueues.all == [true])
        token.invalidate()
    }

    // MARK: Order and multiplicity

    @Test func startReportsExecutingThenNotExecutingAndFinished() {
        let log = EventLog<String>()
        let op = RecordingOp { _ in log.append("main") }
        let executing = op.observe(\.isExecuting, options: [.old, .new]) { _, change in
            log.append(describe("isExecuting", change))
        }
        let finished = op.observe(\.isFinished, options: [.old, .new]) { _, change in
            log.append(describe("isFinished", change))
        }
        op.start()
        #expect(log.all == [
            "isExecuting: false→true",
            "main",
            "isExecuting: true→false",
            "isFinished: false→true",
        ])
        executing.invalidate()
        finished.invalidate()
    }

    @Test func queuedOperationReportsEachChangeOnceInOrder() {
        let queue = OpQueue()
        let log = EventLog<String>()
        let op = RecordingOp { _ in log.append("main") }
        let executing = op.observe(\.isExecuting, options: [.old, .new]) { _, change in
            log.append(describe("isExecuting", change))
        }
        let finished = op.observe(\.isFinished, options: [.old, .new]) { _, change in
            log.append(describe("isFinished", change))
        }
        queue.addOperation(op)
        op.waitUntilFinished()
        #expect(log.all == [
            "isExecuting: false→true",
            "main",
            "isExecuting: true→false",
            "isFinished: false→true",
        ])
        executing.invalidate()
        finished.invalidate()
    }

    @Test func cancelledOperationFinishesWithoutEverExecuting() {
        let log = EventLog<String>()
        let op = RecordingOp { _ in log.append("main") }
        let tokens = [
            op.observe(\.isCancelled, options: [.old, .new]) { _, change in log.append(describe("isCancelled", change)) },
            op.observe(\.isExecuting, options: [.old, .new]) { _, change in log.append(describe("isExecuting", change)) },
            op.observe(\.isFinished, options: [.old, .new]) { _, change in log.append(describe("isFinished", change)) },
        ]
        op.cancel()
        op.cancel()  // a second cancel changes nothing
        op.start()
        op.start()  // starting a finished operation changes nothing
        #expect(log.all == ["isCancelled: false→true", "isFinished: false→true"])
        tokens.forEach { $0.invalidate() }
    }

    @Test func cancellingAWaitingOperationReportsCancelledThenReady() {
        let a = BlockOp {}
        let b = BlockOp {}
        b.addDependency(a)
        let log = EventLog<String>()
        let tokens = [
            b.observe(\.isCancelled, options: [.old, .new]) { _, change in log.append(describe("isCancelled", change)) },
            b.observe(\.isReady, options: [.old, .new]) { _, change in log.append(describe("isReady", change)) },
        ]
        b.cancel()
        #expect(log.all == ["isCancelled: false→true", "isReady: false→true"])
        // The dependency finishing later does not report readiness again.
        a.start()
        #expect(log.all == ["isCancelled: false→true", "isReady: false→true"])
        tokens.forEach { $0.invalidate() }
    }

    @Test func concurrentCancelsReportTheChangeExactlyOnce() {
        for _ in 0..<50 {
            let op = BlockOp {}
            let log = EventLog<String>()
            let token = op.observe(\.isCancelled, options: [.old, .new]) { _, change in
                log.append(describe("isCancelled", change))
            }
            DispatchQueue.concurrentPerform(iterations: 8) { _ in op.cancel() }
            #expect(log.all == ["isCancelled: false→true"])
            token.invalidate()
        }
    }

    @Test func concurrentPriorityChangesAreDeliveredOnceEachAndInOrder() {
        let op = BlockOp {}
        let changes = EventLog<(old: Op.QueuePriority, new: Op.QueuePriority)>()
        let token = op.observe(\.queuePriority, options: [.old, .new]) { _, change in
            changes.append((change.oldValue!, change.newValue!))
        }
        let levels = Op.QueuePriority.allCases
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for step in 0..<500 {
                op.queuePriority = levels[(thread + step) % levels.count]
            }
        }
        // Every delivered change is a real change, and each one starts where the last one ended.
        let all = changes.all
        #expect(!all.isEmpty)
        #expect(all.allSatisfy { $0.old != $0.new })
        #expect(all.first?.old == .normal)
        for (previous, next) in zip(all, all.dropFirst()) where previous.new != next.old {
            Issue.record("change \(next) does not follow \(previous)")
            break
        }
        #expect(all.last?.new == op.queuePriority)
        token.invalidate()
    }

    @Test func changeMadeInsideAHandlerIsDeliveredAfterThatHandlerReturns() {
        let op = BlockOp {}
        let log = EventLog<String>()
        let cancelled = op.observe(\.isCancelled, options: [.new]) { op, _ in
            log.append("cancel handler begins")
            op.queuePriority = .high
            log.append("cancel handler ends")
        }
        let priority = op.observe(\.queuePriority, options: [.old, .new]) { _, change in
            log.append("queuePriority: \(change.oldValue!)→\(change.newValue!)")
        }
        op.cancel()
        #expect(log.all == ["cancel handler begins", "cancel handler ends", "queuePriority: normal→high"])
        cancelled.invalidate()
        priority.invalidate()
    }

    // MARK: Other properties

    @Test func dependenciesChangesCarryOldAndNewLists() {
        let a = BlockOp {}
        let b = BlockOp {}
        let c = BlockOp {}
        let changes = EventLog<[[ObjectIdentifier]?]>()
        let token = c.observe(\.dependencies, options: [.old, .new]) { _, change in
            changes.append([ids(change.oldValue), ids(change.newValue)])
        }
        c.addDependency(a)
        c.addDependency(b)
        c.addDependency(a)  // already there: no change
        c.removeDependency(a)
        c.removeDependency(a)  // not there any more: no change
        let (ia, ib) = (ObjectIdentifier(a), ObjectIdentifier(b))
        #expect(changes.all == [
            [[], [ia]],
            [[ia], [ia, ib]],
            [[ia, ib], [ib]],
        ])
        token.invalidate()
    }

    @Test func queuePriorityChangesCarryOldAndNewValues() {
        let op = BlockOp {}
        let changes = EventLog<String>()
        let token = op.observe(\.queuePriority, options: [.old, .new]) { _, change in
            changes.append("\(change.oldValue!)→\(change.newValue!)")
        }
        op.queuePriority = .high
        op.queuePriority = .high  // same value: no change
        op.queuePriority = .veryLow
        #expect(changes.all == ["normal→high", "high→veryLow"])
        token.invalidate()
    }

    @Test func completionBlockChangesIncludeTheClearingWhenItRuns() {
        let op = BlockOp {}
        let changes = EventLog<String>()
        let token = op.observe(\.completionBlock, options: [.old, .new]) { _, change in
            // Value is an optional closure; each side is present (.old and .new were asked for).
            let old = change.oldValue! == nil ? "nil" : "block"
            let new = change.newValue! == nil ? "nil" : "block"
            changes.append("\(old)→\(new)")
        }
        let ran = Gate()
        op.completionBlock = { ran.open() }
        #expect(changes.all == ["nil→block"])
        op.start()
        // The library sets the block back to nil as it hands it over, before start() returns.
        #expect(changes.all == ["nil→block", "block→nil"])
        #expect(ran.wait())
        op.waitUntilFinished()
        #expect(changes.count == 2)
        token.invalidate()
    }

    @Test func isAsynchronousReportsItsValueInitiallyAndNeverChanges() {
        final class Immediate: AsyncOp, @unchecked Sendable {
            // @unchecked Sendable: adds no stored state to AsyncOp.
            override func execute() { finish() }
        }
        let log = EventLog<String>()
        let sync = BlockOp {}
        let async = Immediate()
        let tokens = [
            sync.observe(\.isAsynchronous, options: [.initial, .new]) { _, change in log.append(describe("sync", change)) },
            async.observe(\.isAsynchronous, options: [.initial, .new]) { _, change in log.append(describe("async", change)) },
        ]
        sync.start()
        async.start()
        async.waitUntilFinished()
        #expect(log.all == ["sync: nil→false", "async: nil→true"])
        tokens.forEach { $0.invalidate() }
    }

    // MARK: Options

    @Test func initialOptionCallsTheHandlerBeforeObserveReturns() {
        let op = BlockOp {}
        op.start()
        let log = EventLog<String>()
        let withNew = op.observe(\.isFinished, options: [.initial, .new]) { _, change in
            log.append(describe("withNew", change))
        }
        #expect(log.all == ["withNew: nil→true"])
        let alone = op.observe(\.isFinished, options: [.initial]) { _, change in
            log.append(describe("alone", change))
        }
        // Without .new the initial call carries no value, as in Foundation.
        #expect(log.all == ["withNew: nil→true", "alone: nil→nil"])
        withNew.invalidate()
        alone.invalidate()
    }

    @Test func initialOptionIsFollowedByLaterChanges() {
        let op = BlockOp {}
        let log = EventLog<String>()
        let token = op.observe(\.isCancelled, options: [.initial, .old, .new]) { _, change in
            log.append(describe("isCancelled", change))
        }
        op.cancel()
        #expect(log.all == ["isCancelled: nil→false", "isCancelled: false→true"])
        token.invalidate()
    }

    @Test func withoutOptionsChangesCarryNoValues() {
        let op = BlockOp {}
        let log = EventLog<String>()
        let token = op.observe(\.isFinished) { _, change in
            log.append(describe("isFinished", change))
        }
        op.start()
        #expect(log.all == ["isFinished: nil→nil"])
        token.invalidate()
    }

    @Test func priorOptionSendsAPriorNotificationBeforeEachChange() {
        let op = BlockOp {}
        let log = EventLog<String>()
        let tokens = [
            op.observe(\.isExecuting, options: [.prior, .old, .new]) { _, change in log.append(describe("isExecuting", change)) },
            op.observe(\.isFinished, options: [.prior, .old, .new]) { _, change in log.append(describe("isFinished", change)) },
        ]
        op.start()
        #expect(log.all == [
            "isExecuting: false→nil (prior)",
            "isExecuting: false→true",
            "isExecuting: true→nil (prior)",
            "isExecuting: true→false",
            "isFinished: false→nil (prior)",
            "isFinished: false→true",
        ])
        tokens.forEach { $0.invalidate() }
    }

    @Test func priorNotificationCarriesTheValueBeforeTheChange() {
        // The library never calls handlers under its lock, so the prior notification comes after
        // the change was made, carrying the old value, just before the regular notification.
        let op = BlockOp {}
        let seen = EventLog<String>()
        let token = op.observe(\.isCancelled, options: [.prior, .old, .new]) { _, change in
            seen.append("\(change.isPrior ? "prior" : "after") old=\(String(describing: change.oldValue)) new=\(String(describing: change.newValue))")
        }
        op.cancel()
        #expect(seen.all == ["prior old=Optional(false) new=nil", "after old=Optional(false) new=Optional(true)"])
        token.invalidate()
    }

    @Test func severalObserversOfOnePropertyEachGetEveryChange() {
        let op = BlockOp {}
        let first = EventLog<String>()
        let second = EventLog<String>()
        let tokens = [
            op.observe(\.isFinished, options: [.new]) { _, change in first.append(describe("isFinished", change)) },
            op.observe(\.isFinished, options: [.new]) { _, change in second.append(describe("isFinished", change)) },
        ]
        op.start()
        #expect(first.all == ["isFinished: nil→true"])
        #expect(second.all == ["isFinished: nil→true"])
        tokens.forEach { $0.invalidate() }
    }

    // MARK: Ending an observation

    @Test func invalidatedTokenStopsDelivery() {
        let op = BlockOp {}
        let log = EventLog<String>()
        let token = op.observe(\.queuePriority, options: [.new]) { _, change in
            log.append("\(change.newValue!)")
        }
        op.queuePriority = .high
        #expect(token.isValid)
        token.invalidate()
        #expect(!token.isValid)
        op.queuePriority = .low
        token.invalidate()  // a second call has no effect
        #expect(log.all == ["high"])
    }

    @Test func releasedTokenStopsDelivery() {
        let op = BlockOp {}
        let log = EventLog<String>()
        var token: ObservationToken? = op.observe(\.queuePriority, options: [.new]) { _, change in
            log.append("\(change.newValue!)")
        }
        op.queuePriority = .high
        #expect(token?.isValid == true)
        token = nil
        op.queuePriority = .low
        #expect(log.all == ["high"])
        #expect(token == nil)
    }

    @Test func invalidatingFromInsideTheHandlerStopsLaterChangesOfTheSameCall() {
        let op = BlockOp {}
        let log = EventLog<String>()
        let box = TokenBox()
        let token = op.observe(\.isExecuting, options: [.new]) { _, change in
            log.append(describe("isExecuting", change))
            box.token.withLockedValue { $0?.invalidate() }
        }
        box.token.withLockedValue { $0 = token }
        op.start()
        // isExecuting became true, then false; the handler ended its observation at the first.
        #expect(log.all == ["isExecuting: nil→true"])
        #expect(!token.isValid)
        box.token.withLockedValue { $0 = nil }
    }

    @Test func invalidatingOneObservationKeepsTheOthers() {
        let op = BlockOp {}
        let log = EventLog<String>()
        let kept = op.observe(\.isFinished, options: [.new]) { _, change in log.append(describe("kept", change)) }
        let dropped = op.observe(\.isFinished, options: [.new]) { _, change in log.append(describe("dropped", change)) }
        dropped.invalidate()
        op.start()
        #expect(log.all == ["kept: nil→true"])
        kept.invalidate()
    }

    @Test func observingDoesNotKeepTheOperationAlive() {
        weak var released: BlockOp?
        var token: ObservationToken?
        do {
            let op = BlockOp {}
            released = op
            token = op.observe(\.isFinished, options: [.new]) { _, _ in }
            op.start()
        }
        #expect(released == nil)
        // The token outlives the operation harmlessly.
        #expect(token?.isValid == true)
        token?.invalidate()
        #expect(token?.isValid == false)
    }

    // MARK: Misuse

    @Test(.oneExitTestAtATime) func observingAPropertyThatIsNotObservableTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = BlockOp {}
            op.name = "watched-op"
            let token = op.observe(\.name) { _, _ in }
            token.invalidate()
        }
        expectStandardError(of: result, toContain: ["not observable", "watched-op"])
    }

    @Test func dependenciesObservedWithoutValuesAreNotCopied() {
        let op = BlockOp {}
        let changes = EventLog<Bool>()
        let observation = op.observe(\.dependencies) { _, change in
            changes.append(change.oldValue == nil && change.newValue == nil)
        }
        let dependencies = (0..<3).map { _ in BlockOp {} }
        for dependency in dependencies { op.addDependency(dependency) }
        op.removeDependency(dependencies[1])
        #expect(changes.all == [true, true, true, true])
        #expect(op.dependencies == [dependencies[0], dependencies[2]])
        observation.invalidate()
    }
}
