#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Generator features that reach a defect of issue 22 which is being fixed on another branch.
///
/// Each switch that is `true` keeps ``ModelGenerator`` from making the steps of one defect's
/// shape, so that the model-based test passes until the fix is merged. Once the fix is in, set
/// the switch to `false` (and run the test a few times with a large `OPERATIONS_MODEL_SEQUENCES`).
/// `OPERATIONS_MODEL_ALL_DEFECTS=1` turns every switch off, to see what the test finds.
struct ModelKnownDefects: Codable, Hashable, Sendable {
    /// Defect 1: with 16 or more dependents, removing a dependent's dependency and adding it back
    /// counts it twice (the dependent runs early, then "dependency count underflow" traps).
    /// Skips adding back a dependency that was removed, on an operation that has had 15 or more
    /// dependents.
    var dependentReAdd = true
    /// Defect 2: `AsyncOp.finish()` from a `didCancel` observer hangs.
    /// Skips ``ModelOpKind/asyncFinishedByDidCancel``.
    var finishFromDidCancel = true
    /// Defect 2 (a wait from a callback): an `OpObserver`'s `didFinish` that waits for its own
    /// operation never returns, however the operation was started. Skips
    /// ``ModelCallback/didFinishWaits``.
    var waitInDidFinish = true
    /// Defect 2 (a wait from a callback): an operation that finishes inside its own body (an
    /// `AsyncOp` calling `finish()` in `execute()`, a group without children) delivers its finish
    /// there, and an `isFinished` observer that waits for it traps ("from inside its own body")
    /// instead of returning at once. Skips ``ModelCallback/isFinishedObserverWaits`` on groups and
    /// on ``ModelOpKind/asyncInline``.
    var waitInFinishObserverInsideBody = true
    /// Not in issue 22: `addOperations` of a batch on a width-1 queue starts the operations that
    /// have conditions after the others of the batch, not in the batch's order (the early
    /// evaluation of their conditions does not happen: the `gated` flag is not set by
    /// `addCondition`). Skips batches holding an operation with conditions.
    var gatedOperationInBatch = true
    /// Defect 4: an observer with `.old`/`.new` registered inside another observer's handler
    /// crashes on a forced cast. Skips ``ModelCommand/observeDependenciesFromHandler(_:)`` and
    /// ``ModelCommand/observeOperationsFromHandler(queue:)``.
    var observerRegisteredInHandler = true
    /// Defect 8: the synchronous `execute()` (and `main()`) run inside a Swift task, on the
    /// cooperative pool, after an `async` condition. Skips `async` conditions on operations
    /// that have a body.
    var bodyAfterAsyncConditionInTask = true
    /// Defect 9: an operation of a suspended queue holds its exclusivity category, and every other
    /// operation of that category waits. Skips keeping a queue with exclusive operations suspended.
    var exclusivityInSuspendedQueue = true
    /// Defect 10: the 16-bit ticket wraps after 65,536 priority changes. Skips storms that long.
    var ticketWrap = true
    /// Defect 12: a group started on a worker runs its children inside `execute()`.
    /// Skips ``ModelOpKind/groupWithTail``.
    var groupRunsChildrenInExecute = true
    /// Defect 13: an operation added to `OpQueue.current` from a group's child is not the group's
    /// child. Skips ``ModelBodyAction/addToCurrentQueue(_:)`` from a group's child.
    var currentQueueOfGroupChild = true
    /// Defect 15: a dependency added to a ready operation in a queue leaves its ready entry (and
    /// its granted categories and the verdict of its conditions) in place: it keeps its old place
    /// in the start order, or waits for a category it holds itself, or runs without its conditions
    /// being evaluated again. Skips adding an unfinished dependency to a ready operation in a queue.
    var lateDependencyAfterConditions = true
    /// Defect 16: `.dependency(x)` moves `x`, a child of a group, out of its group.
    /// Skips `.dependency` conditions on a group's child.
    var conditionDependencyOnGroupChild = true
    /// Defect 18: cancelling an operation does not reach its condition's task.
    /// Skips ``ModelConditionSpec/cancelsItsOperationAndWaits``.
    var cancellationOfConditionTask = true

    /// Every switch off: the generator makes every shape.
    static var none: ModelKnownDefects {
        var none = ModelKnownDefects()
        none.dependentReAdd = false
        none.finishFromDidCancel = false
        none.waitInDidFinish = false
        none.waitInFinishObserverInsideBody = false
        none.gatedOperationInBatch = false
        none.observerRegisteredInHandler = false
        none.bodyAfterAsyncConditionInTask = false
        none.exclusivityInSuspendedQueue = false
        none.ticketWrap = false
        none.groupRunsChildrenInExecute = false
        none.currentQueueOfGroupChild = false
        none.lateDependencyAfterConditions = false
        none.conditionDependencyOnGroupChild = false
        none.cancellationOfConditionTask = false
        return none
    }

    /// The switches the test uses: these, unless `OPERATIONS_MODEL_ALL_DEFECTS=1`.
    static var active: ModelKnownDefects {
        if let value = getenv("OPERATIONS_MODEL_ALL_DEFECTS"), String(cString: value) == "1" { return .none }
        return ModelKnownDefects()
    }

    /// The names of the switches that are on.
    var enabledNames: [String] {
        let all: [(String, Bool)] = [
            ("dependentReAdd", dependentReAdd),
            ("finishFromDidCancel", finishFromDidCancel),
            ("waitInDidFinish", waitInDidFinish),
            ("waitInFinishObserverInsideBody", waitInFinishObserverInsideBody),
            ("gatedOperationInBatch", gatedOperationInBatch),
            ("observerRegisteredInHandler", observerRegisteredInHandler),
            ("bodyAfterAsyncConditionInTask", bodyAfterAsyncConditionInTask),
            ("exclusivityInSuspendedQueue", exclusivityInSuspendedQueue),
            ("ticketWrap", ticketWrap),
            ("groupRunsChildrenInExecute", groupRunsChildrenInExecute),
            ("currentQueueOfGroupChild", currentQueueOfGroupChild),
            ("lateDependencyAfterConditions", lateDependencyAfterConditions),
            ("conditionDependencyOnGroupChild", conditionDependencyOnGroupChild),
            ("cancellationOfConditionTask", cancellationOfConditionTask),
        ]
        return all.filter(\.1).map(\.0)
    }
}
