import Testing
import Dispatch
import Foundation
import Synchronization
@testable import Operations

/// Issue 22, defect 2: whatever an observer or a completion block may do, it may do from every
/// callback. Every callback the library makes (each ``OpObserver`` method, a property observation
/// of each kind of change, a queue observation, the completion block) against every action on the
/// operation it reports on (and on others): each case ends as the "Delivery rules" of the
/// ObservingOperations article say, by completing or by a trap that explains itself, never by a
/// hang (every wait of the driver is bounded) or a crash.
@Suite(.timeLimit(.minutes(5)))
struct CallbackActionMatrixTests {
    @Test(arguments: MatrixCell.completing)
    func aCallbackActionCompletes(_ cell: MatrixCell) async {
        let report = await onOwnThread { MatrixScenario(cell: cell).run() }
        for failure in report.failures {
            Issue.record("\(cell): \(failure)")
        }
    }

    @Test(.oneExitTestAtATime, arguments: MatrixCell.trapping)
    func aCallbackActionThatCannotWorkTrapsWithAnExplanation(_ cell: MatrixCell) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [cell] in
            // If it does not trap, the bounded driver returns and the process exits normally,
            // which fails the expectation.
            _ = MatrixScenario(cell: cell).run()
        }
        expectStandardError(of: result, toContain: cell.expectedTrap ?? [])
    }
}

/// A callback the library makes.
enum MatrixCallback: String, CaseIterable, Codable, Sendable {
    case didAttach, willExecute, didCancel, willFinish, didFinish, didProduce
    /// Property observations: of `isCancelled`, of `isExecuting` turning `true`, of `isFinished`,
    /// of `isReady` turning `true`, of `dependencies`.
    case isCancelled, isExecuting, isFinished, isReady, dependencies
    /// Queue observations: `operations` as the operation is added, `operationCount` as it leaves.
    case queueOperationsOnAdd, queueOperationCountOnLeave
    case completionBlock

    /// Whether the callback comes before the operation's work is over.
    var comesBeforeTheFinish: Bool {
        switch self {
        case .willFinish, .didFinish, .isFinished, .queueOperationCountOnLeave, .completionBlock: false
        case .didAttach, .willExecute, .didCancel, .didProduce, .isCancelled, .isExecuting, .isReady,
             .dependencies, .queueOperationsOnAdd: true
        }
    }

    /// Whether the callback comes before the operation starts.
    var comesBeforeTheStart: Bool {
        self == .isReady || self == .queueOperationsOnAdd
    }
}

/// Something a callback does.
enum MatrixAction: String, CaseIterable, Codable, Sendable {
    /// On the operation it reports on.
    case finish, cancel, addDependency, removeDependency, wait, observe, addObserver, read
    /// On other operations: wait for an unrelated one, make one depend on it, cancel one.
    case waitForAnother, makeAnotherDependOnIt, cancelAnother
}

/// One case: a callback and what it does.
struct MatrixCell: Codable, Sendable, CustomTestStringConvertible {
    let callback: MatrixCallback
    let action: MatrixAction

    var testDescription: String { "\(callback) × \(action)" }

    /// What the trap says, for a case that traps; `nil` for a case that completes.
    var expectedTrap: [String]? {
        switch action {
        case .wait:
            // A wait for what the waiting thread itself holds up: a willExecute or willFinish
            // handler (the operation waits for it), or the observers of a start delivered by the
            // thread that runs the body next.
            switch callback {
            case .willExecute, .willFinish, .isExecuting:
                return ["waitUntilFinished()", "MatrixOp \"observed\"", "observer handler", "never finish"]
            default:
                return nil
            }
        case .finish:
            if callback.comesBeforeTheStart {
                return ["finish() was called on", "\"observed\"", "before it started executing"]
            }
            if !callback.comesBeforeTheFinish {
                return ["finish() was called twice on", "\"observed\""]
            }
            return nil
        case .cancel, .addDependency, .removeDependency, .observe, .addObserver, .read,
             .waitForAnother, .makeAnotherDependOnIt, .cancelAnother:
            return nil
        }
    }

    static let all: [MatrixCell] = MatrixCallback.allCases.flatMap { callback in
        MatrixAction.allCases.map { MatrixCell(callback: callback, action: $0) }
    }
    static let completing = all.filter { $0.expectedTrap == nil }
    static let trapping = all.filter { $0.expectedTrap != nil }
}

/// The operation observed: a callback-style `AsyncOp` whose work ends when the driver (or an
/// action) finishes it.
final class MatrixOp: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: a gate and an atomic.
    let started = Gate()
    private let claimed = Atomic<Bool>(false)

    override func execute() {
        started.open()
    }

    /// Takes the right to call `finish()`: `true` for the first caller.
    func claimFinish() -> Bool {
        !claimed.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// Finishes the operation if it is executing and nobody claimed the finish.
    func finishIfNeeded() {
        if isExecuting, claimFinish() { finish() }
    }
}

/// Runs one case, with every wait bounded, and reports what went wrong.
final class MatrixScenario: @unchecked Sendable {
    // @unchecked Sendable: immutable, or thread-safe boxes, gates and logs.
    let cell: MatrixCell
    let queue = OpQueue()
    let otherQueue = OpQueue()
    let op = MatrixOp()
    /// A finished dependency of the operation, which `removeDependency` removes.
    let removable = BlockOp {}
    /// A finished operation that `addDependency` adds.
    let addable = BlockOp {}
    /// A finished operation added at the end: the observation an action registered hears of it.
    let late = BlockOp {}
    /// The dependency that keeps the operation waiting until the driver runs it (for `isReady`).
    let gate = BlockOp {}
    /// An unrelated operation, in another queue, that finishes by itself.
    let unrelated = BlockOp { blockThread(milliseconds: 2) }
    /// An operation that an action makes depend on the operation.
    let dependent = BlockOp {}
    /// A waiting operation that an action cancels.
    let victim = BlockOp {}
    let victimQueue = OpQueue()
    let produced = BlockOp {}

    /// The callbacks every ``OpObserver`` method of the operation got, from an observer attached first.
    let events = EventLog<String>()
    /// The callbacks the observer added by `addObserver` got.
    let addedObserverEvents = EventLog<String>()
    /// The changes the observation registered by `observe` got.
    let observedChanges = EventLog<[[ObjectIdentifier]?]>()
    let observationToken = LockedBox<ObservationToken?>(nil)
    /// What the action did.
    let outcome = LockedBox<String?>(nil)
    private let fired = Atomic<Bool>(false)
    let actionBegan = Gate()
    let actionEnded = Gate()
    private let helpers = DispatchGroup()
    /// Every wait of the driver ends by then: a case that hangs fails in bounded time.
    private let deadline = DispatchTime.now() + .seconds(20)
    private var tokens: [ObservationToken] = []
    private var failures: [String] = []

    init(cell: MatrixCell) {
        self.cell = cell
        queue.name = "matrix"
        op.name = "observed"
        victimQueue.isSuspended = true
    }

    struct Report {
        let failures: [String]
    }

    // MARK: Driving

    func run() -> Report {
        removable.start()
        addable.start()
        late.start()
        op.addDependency(removable)
        if cell.callback == .isReady { op.addDependency(gate) }
        victimQueue.addOperation(victim)
        otherQueue.addOperation(unrelated)
        op.addObserver(recorder(into: events))
        install()

        if cell.callback.comesBeforeTheStart {
            // The operation cannot start before the action began: a finish() there traps.
            queue.isSuspended = true
        }
        onHelper { self.queue.addOperation(self.op) }
        if cell.callback == .isReady { onHelper { self.gate.start() } }
        if cell.callback.comesBeforeTheStart {
            let came = cell.action == .wait ? actionBegan.wait(seconds: remaining) : actionEnded.wait(seconds: remaining)
            expect(came, "the callback never came, or its action never returned")
            if cell.action != .wait { actionEnded.open() }   // for the check below
            queue.isSuspended = false
        }
        expect(eventually(seconds: Double(remaining)) { hasOpened(self.op.started) || self.op.isFinished }, "the operation never started")

        switch cell.callback {
        case .didAttach:
            onHelper { self.op.addObserver(BlockObserver(didAttach: { op in self.fire(op) })) }
        case .didCancel, .isCancelled:
            onHelper { self.op.cancel() }
        case .dependencies:
            onHelper { self.op.addDependency(self.addable) }
        case .didProduce:
            onHelper { self.op.produce(self.produced) }
        case .willExecute, .willFinish, .didFinish, .isExecuting, .isFinished, .isReady, .queueOperationsOnAdd,
             .queueOperationCountOnLeave, .completionBlock:
            break
        }
        if cell.callback.comesBeforeTheFinish && !cell.callback.comesBeforeTheStart {
            // The action is over before the operation finishes, except a wait for it, which can
            // only return once it finished.
            let came = cell.action == .wait ? actionBegan.wait(seconds: remaining) : actionEnded.wait(seconds: remaining)
            expect(came, "the callback never came, or its action never returned")
            if cell.action != .wait { actionEnded.open() }   // for the check below
        }
        onHelper { self.op.finishIfNeeded() }
        expect(finishes(op, seconds: remaining), "the operation never finished")
        expect(actionEnded.wait(seconds: remaining), "the action never returned")
        expect(helpers.wait(timeout: .now() + .seconds(remaining)) == .success, "a call that made a callback never returned")
        expect(empties(queue, seconds: remaining), "the queue never emptied")
        // A change after everything: an observation registered by the action hears of it.
        op.addDependency(late)
        check()
        // A token keeps its handler, which holds this scenario: drop them to break the cycle.
        for token in tokens { token.invalidate() }
        tokens = []
        observationToken.withLockedValue { token in
            token?.invalidate()
            token = nil
        }
        victimQueue.isSuspended = false
        expect(empties(victimQueue, seconds: remaining) && empties(otherQueue, seconds: remaining), "another queue never emptied")
        return Report(failures: failures)
    }

    /// The seconds left before the deadline (at least one, so that a last look is taken).
    private var remaining: Int {
        let now = DispatchTime.now().uptimeNanoseconds
        let end = deadline.uptimeNanoseconds
        return end > now ? max(1, Int((end - now) / 1_000_000_000)) : 1
    }

    private func onHelper(_ body: @escaping @Sendable () -> Void) {
        helpers.enter()
        Thread.detachNewThread {
            body()
            self.helpers.leave()
        }
    }

    private func expect(_ condition: Bool, _ message: String) {
        if !condition { failures.append(message) }
    }

    // MARK: The callback

    private func install() {
        let fire: @Sendable (Op) -> Void = { [self] op in self.fire(op) }
        switch cell.callback {
        case .didAttach:
            break   // attached while the operation runs (see `run()`)
        case .willExecute:
            op.addObserver(BlockObserver(willExecute: { fire($0) }))
        case .didCancel:
            op.addObserver(BlockObserver(didCancel: { op, _ in fire(op) }))
        case .willFinish:
            op.addObserver(BlockObserver(willFinish: { op, _ in fire(op) }))
        case .didFinish:
            op.addObserver(BlockObserver(didFinish: { op, _ in fire(op) }))
        case .didProduce:
            op.addObserver(BlockObserver(didProduce: { op, _ in fire(op) }))
        case .isCancelled:
            tokens.append(op.observe(\.isCancelled) { op, _ in fire(op) })
        case .isExecuting:
            tokens.append(op.observe(\.isExecuting, options: [.new]) { op, change in
                if change.newValue == true { fire(op) }
            })
        case .isFinished:
            tokens.append(op.observe(\.isFinished) { op, _ in fire(op) })
        case .isReady:
            tokens.append(op.observe(\.isReady, options: [.new]) { op, change in
                if change.newValue == true { fire(op) }
            })
        case .dependencies:
            tokens.append(op.observe(\.dependencies) { op, _ in fire(op) })
        case .queueOperationsOnAdd:
            let op = self.op
            tokens.append(queue.observe(\.operations) { _, _ in fire(op) })
        case .queueOperationCountOnLeave:
            let op = self.op
            tokens.append(queue.observe(\.operationCount, options: [.old, .new]) { _, change in
                if change.newValue! < change.oldValue! { fire(op) }
            })
        case .completionBlock:
            let op = self.op
            op.completionBlock = { fire(op) }
        }
    }

    /// Performs the action, the first time the callback comes.
    private func fire(_ reported: Op) {
        guard !fired.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let op = self.op
        if reported !== op { outcome.withLockedValue { $0 = "the callback reported another operation" } }
        if cell.action == .finish {
            _ = op.claimFinish()   // before the driver may claim it
        }
        actionBegan.open()
        let result: String
        switch cell.action {
        case .finish:
            op.finish()
            result = "finished: \(op.isFinished)"
        case .cancel:
            op.cancel()
            result = "cancelled"
        case .addDependency:
            op.addDependency(addable)
            result = "added: \(op.dependencies.contains { $0 === addable })"
        case .removeDependency:
            op.removeDependency(removable)
            result = "removed: \(!op.dependencies.contains { $0 === removable })"
        case .wait:
            op.waitUntilFinished()
            result = "waited: \(op.isFinished)"
        case .observe:
            let token = op.observe(\.dependencies, options: [.old, .new]) { [observedChanges] _, change in
                observedChanges.append([change.oldValue.map { $0.map(ObjectIdentifier.init) },
                                        change.newValue.map { $0.map(ObjectIdentifier.init) }])
            }
            observationToken.withLockedValue { $0 = token }
            result = "observing"
        case .addObserver:
            op.addObserver(recorder(into: addedObserverEvents))
            result = "observer added"
        case .read:
            let values: [String] = [
                "\(op.isCancelled)", "\(op.isExecuting)", "\(op.isFinished)", "\(op.isReady)",
                "\(op.dependencies.count)", "\(op.queuePriority)", "\(op.error == nil)",
                "\(op.completionBlock == nil)", "\(op.name ?? "")", "\(op.timeout == nil)",
                "\(queue.operationCount)", "\(queue.operations.count)", "\(queue.isSuspended)",
                "\(OpQueue.current?.name ?? "")", "\(Op.current?.name ?? "")",
            ]
            result = "read \(values.count)"
        case .waitForAnother:
            unrelated.waitUntilFinished()
            result = "waited: \(unrelated.isFinished)"
        case .makeAnotherDependOnIt:
            dependent.addDependency(op)
            otherQueue.addOperation(dependent)
            result = "depends"
        case .cancelAnother:
            victim.cancel()
            result = "cancelled another: \(victim.isCancelled)"
        }
        outcome.withLockedValue { $0 = $0 ?? result }
        actionEnded.open()
    }

    private func recorder(into log: EventLog<String>) -> BlockObserver {
        BlockObserver(
            didAttach: { _ in log.append("didAttach") },
            willExecute: { _ in log.append("willExecute") },
            didCancel: { _, _ in log.append("didCancel") },
            willFinish: { _, _ in log.append("willFinish") },
            didFinish: { _, _ in log.append("didFinish") },
            didProduce: { _, _ in log.append("didProduce") }
        )
    }

    // MARK: Outcomes

    private func check() {
        let outcome = self.outcome.withLockedValue { $0 }
        expect(eventually(seconds: Double(remaining)) { self.events.all.last == "didFinish" }, "didFinish never came: \(events.all)")
        let kinds = events.all
        expect(isLegal(kinds), "illegal order of callbacks: \(kinds)")
        let cancels = kinds.filter { $0 == "didCancel" }.count
        expect(cancels == (op.isCancelled ? 1 : 0), "cancelled: \(op.isCancelled), callbacks: \(kinds)")
        switch cell.action {
        case .finish:
            expect(outcome == "finished: true", "finish(): \(outcome ?? "no outcome")")
        case .cancel:
            expect(outcome == "cancelled", "cancel(): \(outcome ?? "no outcome")")
            // Cancelling does nothing once the operation reads as finished.
            if cell.callback.comesBeforeTheFinish || cell.callback == .willFinish {
                expect(op.isCancelled, "the operation was not cancelled")
            }
        case .addDependency:
            expect(outcome == "added: true", "addDependency(_:): \(outcome ?? "no outcome")")
        case .removeDependency:
            expect(outcome == "removed: true", "removeDependency(_:): \(outcome ?? "no outcome")")
        case .wait:
            expect(outcome == "waited: true", "waitUntilFinished(): \(outcome ?? "no outcome")")
        case .observe:
            // Only changes after it registered, each with its values.
            let changes = observedChanges.all
            expect(!changes.isEmpty && changes.allSatisfy { $0[0] != nil && $0[1] != nil },
                   "the observation registered in the callback got \(changes)")
            expect(changes.last?[1]?.last == ObjectIdentifier(late), "the observation missed the last change: \(changes)")
        case .addObserver:
            let added = addedObserverEvents.all
            expect(added.first == "didAttach", "the observer added in the callback got \(added)")
            if cell.callback.comesBeforeTheFinish {
                expect(eventually(seconds: Double(remaining)) { self.addedObserverEvents.all.last == "didFinish" },
                       "the observer added in the callback missed the finish: \(addedObserverEvents.all)")
            }
            expect(isLegal(addedObserverEvents.all, from: "didAttach"), "illegal order for the added observer: \(addedObserverEvents.all)")
        case .read:
            expect(outcome == "read 15", "reading: \(outcome ?? "no outcome")")
        case .waitForAnother:
            expect(outcome == "waited: true", "waiting for another: \(outcome ?? "no outcome")")
        case .makeAnotherDependOnIt:
            expect(outcome == "depends", "addDependency on another: \(outcome ?? "no outcome")")
            expect(finishes(dependent, seconds: remaining), "the dependent never ran")
        case .cancelAnother:
            expect(outcome == "cancelled another: true", "cancelling another: \(outcome ?? "no outcome")")
        }
    }

    /// `didAttach (willExecute)? willFinish didFinish`, with `didProduce` while executing and at
    /// most one `didCancel` before `didFinish`; an observer attached late sees a suffix of it.
    private func isLegal(_ kinds: [String], from first: String = "didAttach") -> Bool {
        let cancels = kinds.indices.filter { kinds[$0] == "didCancel" }
        guard cancels.count <= 1, kinds.first == first else { return false }
        if let cancel = cancels.first, let finish = kinds.firstIndex(of: "didFinish"), cancel > finish { return false }
        let rest = kinds.filter { $0 != "didCancel" && $0 != "didProduce" }
        let full = ["didAttach", "willExecute", "willFinish", "didFinish"]
        let unstarted = ["didAttach", "willFinish", "didFinish"]
        return rest == full || rest == unstarted
            || (rest.count < full.count && rest.first == "didAttach" && Array(full.suffix(rest.count - 1)) == Array(rest.dropFirst()))
    }
}

/// Whether `gate` was opened (it stays open for this check).
private func hasOpened(_ gate: Gate) -> Bool {
    guard gate.wait(seconds: 0) else { return false }
    gate.open()
    return true
}

/// Waits on a thread of its own for `queue` to empty (not on Dispatch's global pool, which the
/// threads a hanging case leaves blocked would starve); `false` if it did not within the guard.
private func empties(_ queue: OpQueue, seconds: Int) -> Bool {
    let done = Gate()
    Thread.detachNewThread {
        queue.waitUntilAllOperationsAreFinished()
        done.open()
    }
    return done.wait(seconds: seconds)
}

/// Waits on another thread for `op`; `false` if it did not finish within the hang guard.
private func finishes(_ op: Op, seconds: Int) -> Bool {
    let done = Gate()
    Thread.detachNewThread {
        op.waitUntilFinished()
        done.open()
    }
    return done.wait(seconds: seconds)
}
