import Testing
import Dispatch
import Foundation
@testable import Operations

/// `OpObserver`s: which callbacks come, in which order, with which state and error, from every
/// way an operation can run, be cancelled, fail or produce; one at a time per operation, with no
/// lock held.
@Suite(.timeLimit(.minutes(1)))
struct OpObserverTests {

    // MARK: Plain runs

    @Test func aBlockOpInAQueueTellsEveryStageInOrder() {
        let log = EventLog<Entry>()
        let bodySawWillExecute = LockedBox<Bool?>(nil)
        let bodySawItself = LockedBox<Bool?>(nil)
        let holder = OpHolder()
        let op = BlockOp {
            bodySawWillExecute.withLockedValue { $0 = log.all.contains { $0.kind == .willExecute } }
            bodySawItself.withLockedValue { $0 = Op.current === holder.op }
            log.append(Entry(.body))
        }
        holder.op = op
        op.addObserver(Recorder(log: log))
        OpQueue().addOperation(op)

        #expect(finishes(op))
        #expect(eventually { log.all.contains { $0.kind == .didFinish } })
        #expect(log.all.map(\.kind) == [.didAttach, .willExecute, .body, .willFinish, .didFinish])
        #expect(bodySawWillExecute.withLockedValue { $0 } == true, "willExecute came after the body started")
        #expect(bodySawItself.withLockedValue { $0 } == true, "Op.current in the body is not the operation")
        expectFinishStates(log)
        #expect(op.error == nil)
        #expect(log.all.allSatisfy { $0.error == nil })
    }

    @Test func aManualStartTellsEveryStageInOrderOnTheCallingThread() {
        let log = EventLog<Entry>()
        let bodySawWillExecute = LockedBox<Bool?>(nil)
        let op = RecordingOp { op in
            bodySawWillExecute.withLockedValue { $0 = log.all.contains { $0.kind == .willExecute } }
            #expect(Op.current === op)
            log.append(Entry(.body))
        }
        op.addObserver(Recorder(log: log))
        #expect(log.all.map(\.kind) == [.didAttach])

        op.start()

        // Nobody else delivers: every callback ran on this thread before `start()` returned.
        #expect(log.all.map(\.kind) == [.didAttach, .willExecute, .body, .willFinish, .didFinish])
        #expect(bodySawWillExecute.withLockedValue { $0 } == true)
        expectFinishStates(log)
        #expect(log.all.allSatisfy { $0.error == nil })
    }

    @Test func anAsyncOpWithAnAsyncBodyTellsEveryStageInOrder() async {
        let log = EventLog<Entry>()
        let bodySawWillExecute = LockedBox<Bool?>(nil)
        let bodySawItself = LockedBox<Bool?>(nil)
        let holder = OpHolder()
        let op = AsyncOp {
            bodySawWillExecute.withLockedValue { $0 = log.all.contains { $0.kind == .willExecute } }
            bodySawItself.withLockedValue { $0 = Op.current === holder.op }
            try await Task.sleep(for: .milliseconds(5))
            log.append(Entry(.body))
        }
        holder.op = op
        op.addObserver(Recorder(log: log))
        OpQueue().addOperation(op)

        await op.waitUntilFinished()

        #expect(await eventuallyAsync { log.all.contains { $0.kind == .didFinish } })
        #expect(log.all.map(\.kind) == [.didAttach, .willExecute, .body, .willFinish, .didFinish])
        #expect(bodySawWillExecute.withLockedValue { $0 } == true)
        #expect(bodySawItself.withLockedValue { $0 } == true, "Op.current in the async body is not the operation")
        expectFinishStates(log)
        #expect(op.error == nil)
        #expect(log.all.allSatisfy { $0.error == nil })
    }

    @Test func anAsyncBodyThatThrowsPassesItsErrorToWillFinishAndDidFinish() async {
        let log = EventLog<Entry>()
        let op = AsyncOp { throw MyError(id: 7) }
        op.addObserver(Recorder(log: log))
        OpQueue().addOperation(op)

        await op.waitUntilFinished()

        #expect(await eventuallyAsync { log.all.contains { $0.kind == .didFinish } })
        #expect(log.all.map(\.kind) == [.didAttach, .willExecute, .willFinish, .didFinish])
        #expect(op.error as? MyError == MyError(id: 7))
        #expect(log.entry(.willFinish)?.error as? MyError == MyError(id: 7))
        #expect(log.entry(.didFinish)?.error as? MyError == MyError(id: 7))
        expectFinishStates(log)
    }

    @Test(arguments: [false, true])
    func aCallbackAsyncOpFinishingOnAnotherThreadTellsEveryStageInOrder(throwing: Bool) async {
        // Nothing here needs Swift's cooperative pool, but the blocking wait runs on a thread of
        // its own so as not to hold one of the pool's threads.
        let log = EventLog<Entry>()
        let op = FinishingElsewhere(log: log, failure: throwing ? MyError(id: 3) : nil)
        op.addObserver(Recorder(log: log))
        OpQueue().addOperation(op)

        #expect(await onOwnThread { finishes(op) })
        #expect(await eventuallyAsync { log.all.contains { $0.kind == .didFinish } })
        #expect(log.all.map(\.kind) == [.didAttach, .willExecute, .body, .willFinish, .didFinish])
        #expect(op.bodySawWillExecute.withLockedValue { $0 } == true)
        #expect(op.bodySawItself.withLockedValue { $0 } == true, "Op.current in execute() is not the operation")
        expectFinishStates(log)
        if throwing {
            #expect(op.error as? MyError == MyError(id: 3))
            #expect(log.entry(.willFinish)?.error as? MyError == MyError(id: 3))
            #expect(log.entry(.didFinish)?.error as? MyError == MyError(id: 3))
        } else {
            #expect(op.error == nil)
            #expect(log.all.allSatisfy { $0.error == nil })
        }
    }

    @Test func aBlockObserverWithNoClosuresIsHarmless() {
        let op = BlockOp {}
        op.addObserver(BlockObserver())
        op.cancel(with: MyError(id: 1))
        op.start()
        #expect(op.isFinished)

        let queued = BlockOp {}
        queued.addObserver(BlockObserver())
        OpQueue().addOperation(queued)
        #expect(finishes(queued))
    }

    @Test func aBlockObserverCallsEachClosureWithTheArgumentsOfItsMethod() {
        let log = EventLog<String>()
        let op = RecordingOp { _ in }
        op.addObserver(BlockObserver(
            didAttach: { o in log.append("attach \(o === op)") },
            willExecute: { o in log.append("willExecute \(o === op)") },
            didCancel: { o, e in log.append("didCancel \(o === op) \((e as? MyError)?.id ?? -1)") },
            willFinish: { o, e in log.append("willFinish \(o === op) \((e as? MyError)?.id ?? -1)") },
            didFinish: { o, e in log.append("didFinish \(o === op) \((e as? MyError)?.id ?? -1)") }
        ))
        op.cancel(with: MyError(id: 4))
        op.start()
        #expect(log.all == ["attach true", "didCancel true 4", "willFinish true 4", "didFinish true 4"])
    }

    // MARK: Cancellation

    @Test func cancelWithoutAnErrorTellsDidCancelWithNoError() {
        let log = EventLog<Entry>()
        let op = RecordingOp { op in
            op.cancel()
            log.append(Entry(.body))
        }
        op.addObserver(Recorder(log: log))
        op.start()

        #expect(log.all.map(\.kind) == [.didAttach, .willExecute, .didCancel, .body, .willFinish, .didFinish])
        #expect(log.entry(.didCancel)?.error == nil)
        #expect(op.isCancelled)
        #expect(op.error == nil)
        expectFinishStates(log)
    }

    @Test func cancelWithAnErrorRecordsItAndTellsDidCancelWithIt() {
        let log = EventLog<Entry>()
        let op = BlockOp { Issue.record("a cancelled operation ran") }
        op.addObserver(Recorder(log: log))

        op.cancel(with: MyError(id: 1))
        #expect(op.isCancelled)
        #expect(op.error as? MyError == MyError(id: 1))
        #expect(log.all.map(\.kind) == [.didAttach, .didCancel])
        #expect(log.entry(.didCancel)?.error as? MyError == MyError(id: 1))

        // The first error wins, and the operation is cancelled only once.
        op.cancel(with: MyError(id: 2))
        op.cancel()
        #expect(op.error as? MyError == MyError(id: 1))
        #expect(log.all.map(\.kind) == [.didAttach, .didCancel])

        op.start()
        #expect(op.isFinished)
        #expect(log.all.map(\.kind) == [.didAttach, .didCancel, .willFinish, .didFinish])
        #expect(log.entry(.willFinish)?.error as? MyError == MyError(id: 1))
        #expect(log.entry(.didFinish)?.error as? MyError == MyError(id: 1))
        expectFinishStates(log, executed: false)
    }

    @Test func cancelWithAnErrorOnAFinishedOperationDoesNothing() {
        let log = EventLog<Entry>()
        let op = BlockOp {}
        op.addObserver(Recorder(log: log))
        op.start()
        #expect(op.isFinished)

        op.cancel(with: MyError(id: 1))
        op.cancel()

        #expect(!op.isCancelled)
        #expect(op.error == nil)
        #expect(log.all.map(\.kind) == [.didAttach, .willExecute, .willFinish, .didFinish])
    }

    @Test(arguments: ["start", "queue"])
    func anOperationCancelledBeforeItStartsIsToldDidCancelWillFinishDidFinishWithoutWillExecute(_ how: String) {
        let log = EventLog<Entry>()
        let op = BlockOp { Issue.record("a cancelled operation ran") }
        op.addObserver(Recorder(log: log))
        op.cancel()
        if how == "start" {
            op.start()
        } else {
            OpQueue().addOperation(op)
            #expect(finishes(op))
            #expect(eventually { log.all.contains { $0.kind == .didFinish } })
        }

        #expect(log.all.map(\.kind) == [.didAttach, .didCancel, .willFinish, .didFinish])
        #expect(log.all.allSatisfy { $0.error == nil })
        expectFinishStates(log, executed: false)
    }

    @Test func aCancelledAsyncOpThatNeverStartedIsToldDidCancelWillFinishDidFinish() async {
        let log = EventLog<Entry>()
        let op = AsyncOp { Issue.record("a cancelled operation ran") }
        op.addObserver(Recorder(log: log))
        op.cancel(with: MyError(id: 9))
        OpQueue().addOperation(op)

        await op.waitUntilFinished()

        #expect(await eventuallyAsync { log.all.contains { $0.kind == .didFinish } })
        #expect(log.all.map(\.kind) == [.didAttach, .didCancel, .willFinish, .didFinish])
        #expect(log.all.dropFirst().allSatisfy { $0.error as? MyError == MyError(id: 9) })
        expectFinishStates(log, executed: false)
    }

    @Test(arguments: ["start", "queue"])
    func aFailedConditionTellsDidCancelWithAConditionFailedError(_ how: String) {
        let log = EventLog<Entry>()
        let op = BlockOp { Issue.record("an operation whose condition failed ran") }
        op.addCondition(.predicate("no") { _ in false })
        op.addObserver(Recorder(log: log))
        if how == "start" {
            op.start()
        } else {
            OpQueue().addOperation(op)
            #expect(finishes(op))
            #expect(eventually { log.all.contains { $0.kind == .didFinish } && log.all.contains { $0.kind == .didCancel } })
        }

        #expect(op.isCancelled)
        #expect((op.error as? ConditionFailedError)?.condition == "no")
        #expect(log.all.map(\.kind) == [.didAttach, .didCancel, .willFinish, .didFinish])
        #expect((log.entry(.didCancel)?.error as? ConditionFailedError)?.condition == "no")
        #expect((log.entry(.willFinish)?.error as? ConditionFailedError)?.condition == "no")
        #expect((log.entry(.didFinish)?.error as? ConditionFailedError)?.condition == "no")
        expectFinishStates(log, executed: false, ignoring: [])
    }

    /// `cancel()` (and a failed condition) make a pending operation in a queue ready, and a worker
    /// can finish it at once: `didCancel` must still come first (it takes its place in the
    /// transition that cancels). A slow `isCancelled` property observer on the cancelling thread
    /// widens the window in which a late `didCancel` would show.
    @Test(arguments: ["cancel", "condition"])
    func didCancelOfAQueuedOperationComesBeforeItsFinish(_ how: String) {
        let log = EventLog<Entry>()
        let op = BlockOp { Issue.record("a cancelled operation ran") }
        let slow = op.observe(\.isCancelled) { _, _ in blockThread(milliseconds: 50) }
        op.addObserver(Recorder(log: log))
        let queue = OpQueue()
        if how == "cancel" {
            op.addDependency(BlockOp {})   // never runs: op waits in the queue until cancelled
            queue.addOperation(op)
            op.cancel()
        } else {
            op.addCondition(.predicate("no") { _ in false })
            queue.addOperation(op)
        }
        #expect(finishes(op))
        #expect(eventually { log.count == 4 })
        #expect(log.all.map(\.kind) == [.didAttach, .didCancel, .willFinish, .didFinish])
        slow.invalidate()
    }

    // MARK: Which observers hear what

    @Test func anObserverImplementingSomeMethodsGetsOnlyThose() {
        let log = EventLog<String>()
        let op = RecordingOp { op in op.cancel() }
        op.addObserver(CancelAndFinishOnly(log: log))
        op.start()
        #expect(log.all == ["didCancel", "didFinish"])

        // One implementing none is fine too.
        let quiet = BlockOp {}
        quiet.addObserver(Silent())
        quiet.start()
        #expect(quiet.isFinished)
    }

    @Test func severalObserversGetEveryEventInRegistrationOrder() {
        let log = EventLog<Entry>()
        let op = RecordingOp { op in op.cancel(with: MyError(id: 5)) }
        for tag in ["A", "B", "C"] {
            op.addObserver(Recorder(log: log, tag: tag))
        }
        op.start()

        let expected: [String] = ["A didAttach", "B didAttach", "C didAttach"]
            + [Kind.willExecute, .didCancel, .willFinish, .didFinish].flatMap { kind in
                ["A", "B", "C"].map { "\($0) \(kind)" }
            }
        #expect(log.all.map { "\($0.tag) \($0.kind)" } == expected)
        #expect(log.all.filter { $0.kind == .didCancel }.allSatisfy { $0.error as? MyError == MyError(id: 5) })
    }

    @Test func anObserverAddedLaterMissesEarlierEvents() {
        let log = EventLog<Entry>()
        let late = Recorder(log: log, tag: "late")
        let op = RecordingOp { op in op.addObserver(late) }
        op.addObserver(Recorder(log: log, tag: "early"))
        op.start()
        #expect(log.all.map { "\($0.tag) \($0.kind)" } == [
            "early didAttach", "early willExecute", "late didAttach",
            "early willFinish", "late willFinish", "early didFinish", "late didFinish",
        ])

        // Added after the cancellation: no didCancel.
        let log2 = EventLog<Entry>()
        let cancelled = BlockOp {}
        cancelled.addObserver(Recorder(log: log2, tag: "early"))
        cancelled.cancel()
        cancelled.addObserver(Recorder(log: log2, tag: "late"))
        cancelled.start()
        #expect(log2.all.map { "\($0.tag) \($0.kind)" } == [
            "early didAttach", "early didCancel", "late didAttach",
            "early willFinish", "late willFinish", "early didFinish", "late didFinish",
        ])
    }

    @Test func anObserverAddedToAFinishedOperationIsOnlyAttached() {
        let log = EventLog<Entry>()
        let op = BlockOp {}
        op.cancel(with: MyError(id: 1))
        op.start()
        #expect(op.isFinished)

        op.addObserver(Recorder(log: log))
        #expect(log.all.map(\.kind) == [.didAttach])
        #expect(log.all.first?.isFinished == true)

        // Nothing comes later either.
        op.cancel()
        blockThread(milliseconds: 20)
        #expect(log.all.map(\.kind) == [.didAttach])
    }

    // MARK: Producing

    @Test func produceTellsDidProduceAndRunsTheProducedOperationInTheSameQueue() {
        let queue = OpQueue()
        let log = EventLog<Entry>()
        let childQueue = LockedBox<OpQueue?>(nil)
        let childSawItself = LockedBox<Bool?>(nil)
        let childHolder = OpHolder()
        let child = BlockOp {
            childQueue.withLockedValue { $0 = OpQueue.current }
            childSawItself.withLockedValue { $0 = Op.current === childHolder.op }
        }
        childHolder.op = child
        let parent = RecordingOp { op in op.produce(child) }
        parent.addObserver(Recorder(log: log))
        queue.addOperation(parent)

        #expect(finishes(parent))
        #expect(finishes(child))
        #expect(eventually { log.all.contains { $0.kind == .didFinish } })
        #expect(log.all.map(\.kind) == [.didAttach, .willExecute, .didProduce, .willFinish, .didFinish])
        #expect(log.entry(.didProduce)?.produced === child)
        #expect(childQueue.withLockedValue { $0 } === queue, "the produced operation ran elsewhere")
        #expect(childSawItself.withLockedValue { $0 } == true)
        #expect(queueEmpties(queue))
    }

    // MARK: No lock held, one at a time

    @Test(arguments: ["start", "queue"])
    func callbacksMayUseTheOperationAndItsQueue(_ how: String) async {
        let queue = OpQueue()
        let other = BlockOp {}
        let outcome: Bool = await onOwnThread {
            let log = EventLog<String>()
            let op = BlockOp { log.append("body") }
            op.name = "observed"
            op.addObserver(Busy(queue: queue, other: other, log: log))
            let ran = Gate()
            onNewThread {
                if how == "start" { op.start() } else { queue.addOperation(op) }
                ran.open()
            }
            guard ran.wait(), finishes(op), eventually({ log.all.last == "didFinish" }) else { return false }
            // willExecute cancelled the operation; its body still ran, as for any running one.
            #expect(log.all == ["didAttach", "willExecute", "didCancel", "body", "willFinish", "didFinish"])
            #expect(op.isCancelled)
            return queueEmpties(queue)
        }
        #expect(outcome, "a callback deadlocked")
        // `other` depends on the operation, and on a fresh operation from each of the five callbacks.
        #expect(other.dependencies.count == 6)
    }

    @Test func callbacksOfOneOperationNeverOverlapAndComeInALegalOrderUnderConcurrentCancels() async {
        let run = await ConcurrentCancels.run()
        #expect(run.drained, "the queue did not finish its operations")
        var illegal: [String] = []
        for (index, op) in run.ops.enumerated() {
            let kinds = run.logs[index].all
            #expect(run.meters[index].peak == 1, "callbacks of op\(index) overlapped")
            if !isLegal(kinds) { illegal.append("op\(index): \(kinds)") }
            let cancels = kinds.filter { $0 == .didCancel }.count
            #expect(cancels == (op.isCancelled ? 1 : 0), "op\(index) cancelled=\(op.isCancelled): \(kinds)")
        }
        #expect(illegal.isEmpty, "\(illegal.count) illegal callback orders:\n\(illegal.prefix(10).joined(separator: "\n"))")
        // Usually the run cancels both running operations and pending ones; on a slow machine
        // (a sanitizer) one kind may be missing, which weakens the run but is not a failure.
        let cancelledRunning = run.ops.indices.contains { run.ops[$0].isCancelled && run.logs[$0].all.contains(.willExecute) }
        let cancelledPending = run.ops.indices.contains { run.ops[$0].isCancelled && !run.logs[$0].all.contains(.willExecute) }
        if !cancelledRunning || !cancelledPending {
            print("note: cancelled running operations: \(cancelledRunning), pending ones: \(cancelledPending)")
        }
    }
}

/// 200 observed operations in a wide queue, while two threads cancel them over and over: those
/// with `index % 4` of 0 or 1 whatever their state (often before they start), the others while
/// they execute. Every callback blocks a little, inside a concurrency meter per operation.
private enum ConcurrentCancels {
    struct Run {
        let ops: [Op]
        let logs: [EventLog<Kind>]
        let meters: [ConcurrencyMeter]
        let drained: Bool
    }

    static func run(count: Int = 200) async -> Run {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 16
        let logs = (0..<count).map { _ in EventLog<Kind>() }
        let meters = (0..<count).map { _ in ConcurrencyMeter() }
        let ops: [Op] = (0..<count).map { index in
            let op = RecordingOp(name: "op\(index)") { op in
                // Some return at once, racing their finish against the cancels; the others run
                // until a canceller gets them (or briefly, if none does).
                if index % 3 != 0 { eventually(seconds: 0.05) { op.isCancelled } }
            }
            op.addObserver(Metered(log: logs[index], meter: meters[index]))
            return op
        }
        let drained: Bool = await onOwnThread {
            let stop = LockedBox(false)
            let stopped = DispatchGroup()
            for canceller in 0..<2 {
                stopped.enter()
                onNewThread {
                    while !stop.withLockedValue({ $0 }) {
                        for (index, op) in ops.enumerated() where index % 4 == canceller || op.isExecuting {
                            op.cancel()
                            op.cancel()
                        }
                        blockThread(milliseconds: 1)
                    }
                    stopped.leave()
                }
            }
            queue.addOperations(ops, waitUntilFinished: false)
            let done = Gate()
            onNewThread {
                queue.waitUntilAllOperationsAreFinished()
                done.open()
            }
            let drained = done.wait(seconds: 30)
            stop.withLockedValue { $0 = true }
            stopped.wait()
            // didFinish may still be on its way to an observer when the queue empties.
            return drained && eventually { logs.allSatisfy { $0.all.contains(.didFinish) } }
        }
        return Run(ops: ops, logs: logs, meters: meters, drained: drained)
    }
}

// MARK: - Helpers

private struct MyError: Error, Equatable {
    let id: Int
}

private enum Kind: String, Sendable, CustomStringConvertible {
    case didAttach, willExecute, didCancel, willFinish, didFinish, didProduce, body
    var description: String { rawValue }
}

/// One callback (or the body), with the operation's `isFinished` when it came.
private struct Entry: Sendable {
    let kind: Kind
    var tag = ""
    var error: (any Error)? = nil
    var isFinished = false
    var produced: Op? = nil
    /// For willFinish and didFinish: whether the error passed is the operation's `error`.
    var errorIsOpError = true

    init(_ kind: Kind, tag: String = "", error: (any Error)? = nil, isFinished: Bool = false,
         produced: Op? = nil, errorIsOpError: Bool = true) {
        self.kind = kind
        self.tag = tag
        self.error = error
        self.isFinished = isFinished
        self.produced = produced
        self.errorIsOpError = errorIsOpError
    }
}

extension EventLog where Event == Entry {
    /// The first entry of `kind`.
    fileprivate func entry(_ kind: Kind) -> Entry? { all.first { $0.kind == kind } }
}

/// Logs every callback with the operation's state.
private struct Recorder: OpObserver {
    let log: EventLog<Entry>
    var tag = ""

    func didAttach(to operation: Op) {
        log.append(Entry(.didAttach, tag: tag, isFinished: operation.isFinished))
    }
    func willExecute(_ operation: Op) {
        log.append(Entry(.willExecute, tag: tag, isFinished: operation.isFinished))
    }
    func didCancel(_ operation: Op, error: (any Error)?) {
        log.append(Entry(.didCancel, tag: tag, error: error, isFinished: operation.isFinished))
    }
    func willFinish(_ operation: Op, error: (any Error)?) {
        log.append(Entry(.willFinish, tag: tag, error: error, isFinished: operation.isFinished,
                         errorIsOpError: sameError(error, operation.error)))
    }
    func didFinish(_ operation: Op, error: (any Error)?) {
        log.append(Entry(.didFinish, tag: tag, error: error, isFinished: operation.isFinished,
                         errorIsOpError: sameError(error, operation.error)))
    }
    func didProduce(_ operation: Op, operation produced: Op) {
        log.append(Entry(.didProduce, tag: tag, isFinished: operation.isFinished, produced: produced))
    }
}

/// One willFinish and one didFinish, each passed the operation's `error`; didFinish comes once the operation reads as finished, and
/// every callback before it before. For an operation that never ran (`executed: false`),
/// willFinish comes right before didFinish, once the operation reads as finished (see
/// `OpObserver.willFinish`), so it is left out.
private func expectFinishStates(_ log: EventLog<Entry>, executed: Bool = true, ignoring: Set<Kind> = [],
                                sourceLocation: SourceLocation = #_sourceLocation) {
    let entries = log.all.filter { !ignoring.contains($0.kind) }
    #expect(entries.filter { $0.kind == .willFinish }.count == 1, sourceLocation: sourceLocation)
    #expect(entries.filter { $0.kind == .didFinish }.count == 1, sourceLocation: sourceLocation)
    for entry in entries where entry.kind != .didFinish && (executed || entry.kind != .willFinish) {
        #expect(!entry.isFinished, "\(entry.kind) came once the operation read as finished", sourceLocation: sourceLocation)
    }
    for entry in entries where entry.kind == .didFinish {
        #expect(entry.isFinished, "didFinish came before the operation read as finished", sourceLocation: sourceLocation)
    }
    for entry in entries where entry.kind == .willFinish || entry.kind == .didFinish {
        #expect(entry.errorIsOpError, "\(entry.kind) got \(String(describing: entry.error)), not op.error", sourceLocation: sourceLocation)
    }
}

/// Whether two errors are both absent, or the same value.
private func sameError(_ a: (any Error)?, _ b: (any Error)?) -> Bool {
    switch (a, b) {
    case (nil, nil): true
    case let (a?, b?): String(reflecting: a) == String(reflecting: b)
    default: false
    }
}

/// Implements two of the methods; the others keep their empty defaults.
private struct CancelAndFinishOnly: OpObserver {
    let log: EventLog<String>
    func didCancel(_ operation: Op, error: (any Error)?) { log.append("didCancel") }
    func didFinish(_ operation: Op, error: (any Error)?) { log.append("didFinish") }
}

/// Implements nothing.
private struct Silent: OpObserver {}

/// Uses the operation, its queue and another operation from every callback.
private struct Busy: OpObserver {
    let queue: OpQueue
    let other: Op
    let log: EventLog<String>

    private func touch(_ operation: Op) {
        _ = operation.name
        _ = operation.isFinished
        _ = operation.isExecuting
        _ = operation.isCancelled
        _ = operation.isReady
        _ = operation.error
        _ = operation.dependencies
        _ = operation.completionBlock
        _ = operation.queuePriority
        _ = queue.operationCount
        _ = queue.operations
        _ = queue.isSuspended
        other.addDependency(operation)
        other.addDependency(BlockOp {})
        operation.name = "observed"
    }

    func didAttach(to operation: Op) { touch(operation); log.append("didAttach") }
    func willExecute(_ operation: Op) {
        touch(operation)
        operation.cancel()
        log.append("willExecute")
    }
    func didCancel(_ operation: Op, error: (any Error)?) { touch(operation); log.append("didCancel") }
    func willFinish(_ operation: Op, error: (any Error)?) { touch(operation); log.append("willFinish") }
    func didFinish(_ operation: Op, error: (any Error)?) { touch(operation); log.append("didFinish") }
}

/// Logs each callback inside a concurrency meter, blocking a little in each.
private struct Metered: OpObserver {
    let log: EventLog<Kind>
    let meter: ConcurrencyMeter

    private func record(_ kind: Kind, blocking: Bool = true) {
        meter.enter()
        log.append(kind)
        if blocking { blockThread(milliseconds: 1) }
        meter.leave()
    }

    func didAttach(to operation: Op) { record(.didAttach, blocking: false) }
    func willExecute(_ operation: Op) { record(.willExecute) }
    func didCancel(_ operation: Op, error: (any Error)?) { record(.didCancel) }
    func willFinish(_ operation: Op, error: (any Error)?) { record(.willFinish) }
    func didFinish(_ operation: Op, error: (any Error)?) { record(.didFinish) }
}

/// `didAttach (willExecute)? willFinish didFinish`, with at most one `didCancel` anywhere after
/// `didAttach` and before `didFinish`.
private func isLegal(_ kinds: [Kind]) -> Bool {
    let cancels = kinds.indices.filter { kinds[$0] == .didCancel }
    guard cancels.count <= 1 else { return false }
    if let cancel = cancels.first, let finish = kinds.firstIndex(of: .didFinish), cancel > finish { return false }
    let rest = kinds.filter { $0 != .didCancel }
    return rest == [.didAttach, .willExecute, .willFinish, .didFinish] || rest == [.didAttach, .willFinish, .didFinish]
}

/// A callback-style `AsyncOp` that finishes from a thread of its own, optionally with an error.
private final class FinishingElsewhere: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: immutable, or locked boxes.
    let log: EventLog<Entry>
    let failure: MyError?
    let bodySawWillExecute = LockedBox<Bool?>(nil)
    let bodySawItself = LockedBox<Bool?>(nil)

    init(log: EventLog<Entry>, failure: MyError?) {
        self.log = log
        self.failure = failure
        super.init()
    }

    override func execute() {
        bodySawWillExecute.withLockedValue { $0 = log.all.contains { $0.kind == .willExecute } }
        bodySawItself.withLockedValue { $0 = Op.current === self }
        log.append(Entry(.body))
        onNewThread { [self] in
            blockThread(milliseconds: 5)
            if let failure { finish(throwing: failure) } else { finish() }
        }
    }
}

/// Lets a body refer to its own `BlockOp`/`AsyncOp`, set once before the operation runs.
private final class OpHolder: @unchecked Sendable {
    // @unchecked Sendable: set before the operation is queued, read only by its body afterwards.
    // Weak: the operation's block holds this holder.
    weak var op: Op?
}

/// Waits for `op` on another thread; `false` if it did not finish within the hang guard.
private func finishes(_ op: Op, seconds: Int = 10) -> Bool {
    let done = Gate()
    onNewThread {
        op.waitUntilFinished()
        done.open()
    }
    return done.wait(seconds: seconds)
}

/// Runs `body` on a thread of its own (not one of Dispatch's global pool, which a few blocked
/// threads can exhaust, nor one of Swift's cooperative pool).
private func onNewThread(_ body: @escaping @Sendable () -> Void) {
    Thread.detachNewThread(body)
}

