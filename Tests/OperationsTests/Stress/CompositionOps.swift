import Dispatch
@testable import Operations

// The operations, observer and error of the composition stress test (see ``CompositionScenario``).
// Each operation calls back into its ``CompositionRun``, which records and checks what happens;
// the subclasses also record every `cancel()` call (a group's cascade included).

/// The error of a failing body, a throwing condition, or a driver's `cancel(with:)`.
struct CompositionError: Error, CustomStringConvertible {
    let node: Int
    let reason: String
    var description: String { "CompositionError(n\(node) \(reason))" }
}

/// An `Op` subclass whose `main()` is the body.
final class CompositionSyncOp: Op, @unchecked Sendable {
    // @unchecked Sendable: immutable `let`s of Sendable types; the rest is Op's.
    let run: CompositionRun
    let node: Int

    init(run: CompositionRun, node: Int) {
        self.run = run
        self.node = node
        super.init()
    }

    override func main() { run.syncBody(node, self) }

    override func cancel() {
        run.noteCancelCall(node)
        super.cancel()
    }
}

/// A `BlockOp` subclass that records `cancel()` calls.
final class CompositionBlockOp: BlockOp, @unchecked Sendable {
    // @unchecked Sendable: immutable `let`s of Sendable types; the rest is BlockOp's.
    let run: CompositionRun
    let node: Int

    init(run: CompositionRun, node: Int, block: @escaping @Sendable () -> Void) {
        self.run = run
        self.node = node
        super.init(block: block)
    }

    override func cancel() {
        run.noteCancelCall(node)
        super.cancel()
    }
}

/// An `AsyncOp` subclass: an `async` body run by the library, or a callback finishing from
/// `DispatchQueue.global()`.
final class CompositionAsyncOp: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: immutable `let`s of Sendable types; the rest is AsyncOp's.
    let run: CompositionRun
    let node: Int
    let callback: Bool

    init(run: CompositionRun, node: Int, callback: Bool) {
        self.run = run
        self.node = node
        self.callback = callback
        super.init()
    }

    override func execute() {
        if callback {
            run.callbackExecute(node, self)
        } else {
            super.execute()
        }
    }

    override func execute() async throws {
        try await run.asyncBody(node, self)
    }

    override func cancel() {
        run.noteCancelCall(node)
        super.cancel()
    }
}

/// A `GroupOp` subclass that records when it starts executing and its `cancel()` calls.
final class CompositionGroupOp: GroupOp, @unchecked Sendable {
    // @unchecked Sendable: immutable `let`s of Sendable types; the rest is GroupOp's.
    let run: CompositionRun
    let node: Int

    init(run: CompositionRun, node: Int, operations: [Op]) {
        self.run = run
        self.node = node
        super.init(operations: operations)
    }

    override func execute() {
        run.groupExecute(node, self)
        super.execute()
    }

    override func cancel() {
        run.noteCancelCall(node)
        super.cancel()
    }
}

/// Records every callback; slot 0 of a group is the harness's own observer, whose `willFinish`
/// marks the end of the group's execution.
struct CompositionObserver: OpObserver {
    let run: CompositionRun
    let node: Int
    let slot: Int

    func didAttach(to operation: Op) { run.observed(node, slot, .attach, operation) }
    func willExecute(_ operation: Op) { run.observed(node, slot, .willExecute, operation) }
    func didCancel(_ operation: Op, error: (any Error)?) { run.observed(node, slot, .didCancel(error.map { "\($0)" }), operation) }
    func willFinish(_ operation: Op, error: (any Error)?) { run.observed(node, slot, .willFinish(error.map { "\($0)" }), operation) }
    func didFinish(_ operation: Op, error: (any Error)?) { run.observed(node, slot, .didFinish(error.map { "\($0)" }), operation) }
    func didProduce(_ operation: Op, operation produced: Op) { run.observed(node, slot, .didProduce(produced.name ?? "?"), operation) }
}

/// What an observer heard.
enum CompositionObserverEvent: Sendable, Equatable {
    case attach
    case willExecute
    case didCancel(String?)
    case willFinish(String?)
    case didFinish(String?)
    case didProduce(String)

    var label: String {
        switch self {
        case .attach: "didAttach"
        case .willExecute: "willExecute"
        case .didCancel: "didCancel"
        case .willFinish: "willFinish"
        case .didFinish: "didFinish"
        case .didProduce: "didProduce"
        }
    }
}

/// Library bugs this harness found (all fixed): each is still recognised by name, so that a
/// regression says which one came back.
enum CompositionKnownIssue: String, Sendable, CaseIterable {
    case conditionFailedGroupRunsChildren = "K1: a GroupOp cancelled by a failed condition does not cancel its children, which run their bodies"
    case permissionNeverAdded = "K2: the operation of a .dependency condition is never added (never runs) when its dependent was cancelled before it was enqueued"
    case lateDidCancel = "K3: didCancel is delivered after willFinish/didFinish (the cancellation, or failed condition, was posted to the observers after the operation finished)"
    case secondDidCancel = "K4: an operation cancelled while its conditions are evaluated, one of which then fails, hears didCancel twice (from cancel() and from the failed condition), often after didFinish"
    case attachNotFirst = "K6: an observer added while the operation runs can hear other callbacks before didAttach (ObserverMailbox.add registers it, then posts didAttach in a second step)"
    case delayFinishedBeforeWillExecute = "K7: a DelayOp cancelled as it starts finishes before its observers hear willExecute (DelayOp.didCancelWhileExecuting ended it before execute() ran), so they hear willExecute after willFinish (see DelayOpStartRaceTests)"
}
