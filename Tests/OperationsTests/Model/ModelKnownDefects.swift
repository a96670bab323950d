import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Generator features that reach a defect of issue 22 which is being fixed on another branch.
///
/// Each switch that is `true` keeps ``ModelGenerator`` (and the shrinker) from making the steps of
/// one defect's shape (see ``ModelDefectFilter``), so that the model-based test passes until the
/// fix is merged. Once the fix is in, set the switch to `false` (and run the test a few times
/// with a large `OPERATIONS_MODEL_SEQUENCES`). `OPERATIONS_MODEL_DEFECTS_OFF=<name>,<name>` turns
/// the named switches off for one run, `OPERATIONS_MODEL_ALL_DEFECTS=1` all of them.
struct ModelKnownDefects: Codable, Hashable, Sendable {
    /// Defect 1: with 16 or more dependents, removing a dependent's dependency and adding it back
    /// counts it twice (the dependent runs early, then "dependency count underflow" traps).
    /// Skips adding back a dependency that was removed, on an operation that has had 15 or more
    /// dependents.
    var dependentReAdd = false
    /// Defect 2: `AsyncOp.finish()` from a `didCancel` observer hangs.
    /// Skips ``ModelOpKind/asyncFinishedByDidCancel``.
    var finishFromDidCancel = false
    /// Defect 2 (a wait from a callback): an `OpObserver`'s `didFinish` that waits for its own
    /// operation never returns, however the operation was started. Skips
    /// ``ModelCallback/didFinishWaits``.
    var waitInDidFinish = false
    /// Defect 2 (a wait from a callback): an `isFinished` observer that waits for its operation
    /// traps ("from inside its own body") when the operation finishes inside its body (an
    /// `AsyncOp` calling `finish()` in `execute()`, a group without children), and now and then
    /// hangs when another thread delivers the finish (a cancellation delivered at the same time).
    /// Skips ``ModelCallback/isFinishedObserverWaits``.
    var waitInIsFinishedObserver = false
    /// Not in issue 22: `addOperations` of a batch on a width-1 queue starts the operations that
    /// have conditions after the others of the batch, not in the batch's order: the early
    /// evaluation of their conditions (`conditionsPassedEarly`) never happens, because `addCondition`
    /// changes the machine under `withState`, which does not publish the `gated` flag that
    /// `enqueue` reads. Skips batches holding an operation with conditions.
    var gatedOperationInBatch = false
    /// Defect 4: an observer with `.old`/`.new` registered inside another observer's handler
    /// crashes on a forced cast. Skips ``ModelCommand/observeDependenciesFromHandler(_:)`` and
    /// ``ModelCommand/observeOperationsFromHandler(queue:)``.
    var observerRegisteredInHandler = false
    /// Defect 8: an `AsyncOp` whose `async` body finishes starts the queue's next operations in
    /// its own task: their `main()` or synchronous `execute()` run on the cooperative pool. Skips
    /// ``ModelOpKind/asyncBody``.
    var startInTaskOfAsyncBody = false
    /// Defect 9: an operation of a suspended queue holds its exclusivity category, and every other
    /// operation of that category waits. Skips keeping a queue with exclusive operations suspended.
    var exclusivityInSuspendedQueue = false
    /// Defect 10: the 16-bit ticket wraps after 65,536 priority changes. Skips storms that long.
    var ticketWrap = false
    /// Defect 12: a group started on a worker runs its children inside `execute()`.
    /// Skips ``ModelOpKind/groupWithTail``.
    var groupRunsChildrenInExecute = false
    /// Defect 13: an operation added to `OpQueue.current` from a group's child is not the group's
    /// child. Skips ``ModelBodyAction/addToCurrentQueue(_:)`` from a group's child.
    var currentQueueOfGroupChild = false
    /// Defect 15: a dependency added to a ready operation in a queue leaves its ready entry (and
    /// its granted categories and the verdict of its conditions) in place: it keeps its old place
    /// in the start order, or waits for a category it holds itself, or runs without its conditions
    /// being evaluated again. Skips adding an unfinished dependency to a ready operation in a queue.
    var lateDependencyAfterConditions = false
    /// Defect 16: `.dependency(x)` moves `x`, a child of a group, out of its group.
    /// Skips `.dependency` conditions on a group's child.
    var conditionDependencyOnGroupChild = false
    /// Defect 18: cancelling an operation does not reach its condition's task.
    /// Skips ``ModelConditionSpec/cancelsItsOperationAndWaits``.
    var cancellationOfConditionTask = false

    /// Not in issue 22: `removeDependency(_:)` racing with that dependency's finish leaves the
    /// operation not ready until the finish reaches it, though it has no other dependency: a
    /// `start()` in between traps ("not ready"). Skips, in interleaved sequences, starting by hand
    /// an operation that had a dependency removed while that dependency was in a queue. Fixed:
    /// `RemoveDependencyWhileItFinishesTests`.
    var readyAfterRemovingFinishingDependency = false

    /// Found by the long run on 2026-11-25 (`OPERATIONS_MODEL_SEED=17875528654973719652`,
    /// staged): in a width-1 queue, a body that adds an operation and then cancels one that waits
    /// for it. The model was wrong: its order check listed the body's cancellations before its
    /// additions, whatever their order; the library lists them as they happen. Fixed in the model
    /// (`theOrderCheckListsWhatABodyDoesInTheOrderItDoesIt`). Skips, in staged sequences, a
    /// dependency on an operation that a body cancels, and a body's cancellation of an
    /// operation that another depends on.
    var dependencyOnOperationCancelledByABody = false

    /// Every switch, by name.
    static var switches: [(name: String, keyPath: WritableKeyPath<ModelKnownDefects, Bool>)] { [
        ("dependentReAdd", \.dependentReAdd),
        ("finishFromDidCancel", \.finishFromDidCancel),
        ("waitInDidFinish", \.waitInDidFinish),
        ("waitInIsFinishedObserver", \.waitInIsFinishedObserver),
        ("gatedOperationInBatch", \.gatedOperationInBatch),
        ("observerRegisteredInHandler", \.observerRegisteredInHandler),
        ("startInTaskOfAsyncBody", \.startInTaskOfAsyncBody),
        ("exclusivityInSuspendedQueue", \.exclusivityInSuspendedQueue),
        ("ticketWrap", \.ticketWrap),
        ("groupRunsChildrenInExecute", \.groupRunsChildrenInExecute),
        ("currentQueueOfGroupChild", \.currentQueueOfGroupChild),
        ("lateDependencyAfterConditions", \.lateDependencyAfterConditions),
        ("conditionDependencyOnGroupChild", \.conditionDependencyOnGroupChild),
        ("cancellationOfConditionTask", \.cancellationOfConditionTask),
        ("readyAfterRemovingFinishingDependency", \.readyAfterRemovingFinishingDependency),
        ("dependencyOnOperationCancelledByABody", \.dependencyOnOperationCancelledByABody),
    ] }

    /// Every switch off: the generator makes every shape.
    static var none: ModelKnownDefects {
        var none = ModelKnownDefects()
        for (_, keyPath) in switches { none[keyPath: keyPath] = false }
        return none
    }

    /// The switches the test uses: these, except those named (comma-separated) in
    /// `OPERATIONS_MODEL_DEFECTS_OFF`, or none at all with `OPERATIONS_MODEL_ALL_DEFECTS=1`.
    static var active: ModelKnownDefects {
        if let value = getenv("OPERATIONS_MODEL_ALL_DEFECTS"), String(cString: value) == "1" { return .none }
        var active = ModelKnownDefects()
        if let value = getenv("OPERATIONS_MODEL_DEFECTS_OFF") {
            let names = String(cString: value).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            for (name, keyPath) in switches where names.contains(name) { active[keyPath: keyPath] = false }
        }
        return active
    }

    /// The names of the switches that are on.
    var enabledNames: [String] {
        Self.switches.filter { self[keyPath: $0.keyPath] }.map(\.name)
    }
}
