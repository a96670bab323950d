/// One step of a model sequence: one call (or a few, for `fan` and `priorityStorm`) of the
/// library's public API, made by the test's driver thread.
///
/// Operations and queues are named by numbers (`op3`, `queues[1]`); ``ReferenceModel`` decides
/// which steps are legal (never a programmer error of the library, never an ambiguous outcome)
/// and drops the others, so that generated and shrunk sequences only hold steps it can predict.
enum ModelCommand: Codable, Hashable, Sendable {
    /// `let opN = <kind>` (with a completion block that records it).
    case make(Int, ModelOpKind)
    /// `queues[q].addOperations([...], waitUntilFinished: false)`.
    case enqueue([Int], queue: Int)
    /// `group.addChild(op)`.
    case addChild(Int, group: Int)
    case addDependency(Int, on: Int)
    case removeDependency(Int, on: Int)
    /// `count` new operations, numbered from `first`, each depending on `on`, added to `queue`:
    /// gives an operation many dependents.
    case fan(on: Int, first: Int, count: Int, queue: Int)
    case setPriority(Int, ModelPriority)
    /// `changes` changes of the priority, alternating between two values.
    case priorityStorm(Int, changes: Int)
    case cancel(Int)
    /// `cancel(with: ModelWorkError.cancelled)`.
    case cancelWithError(Int)
    case addCondition(Int, ModelConditionSpec)
    /// Records the operation's `OpObserver` callbacks and its `isExecuting`, `isFinished` and
    /// `isCancelled` changes (`[.old, .new]`).
    case observe(Int)
    /// Observes `dependencies` (no options); the first call adds a dependency on a finished
    /// operation and registers an observer of `dependencies` with `[.old, .new]` (defect 4's shape).
    case observeDependenciesFromHandler(Int)
    /// Observes the queue's `operations` (no options); the first call registers an observer of
    /// `operations` with `[.old, .new]`.
    case observeOperationsFromHandler(queue: Int)
    /// Something the operation's body does when it runs.
    case onRun(Int, ModelBodyAction)
    /// Something done from one of the operation's callbacks.
    case onCallback(Int, ModelCallback)
    /// `op.start()` on the driver thread (the driver then waits for its completion block).
    case startByHand(Int)
    /// Resumes the queues (not those kept suspended), waits until everything that can finish has,
    /// and suspends them again (staged sequences only).
    case runUntilQuiet
    /// The queue stays suspended while the others run, until the very end (staged sequences).
    case keepSuspended(queue: Int)
    /// `isSuspended = true` / `false` (interleaved sequences).
    case suspend(queue: Int)
    case resume(queue: Int)
    /// A short sleep of the driver (interleaved sequences), in microseconds.
    case pause(Int)

    /// The steps as Swift, one line each.
    var swift: String {
        switch self {
        case .make(let op, let kind): "let op\(op) = \(kind.creation)"
        case .enqueue(let ops, let queue):
            ops.count == 1 ? "queues[\(queue)].addOperation(op\(ops[0]))"
                : "queues[\(queue)].addOperations([\(ops.map { "op\($0)" }.joined(separator: ", "))], waitUntilFinished: false)"
        case .addChild(let op, let group): "op\(group).addChild(op\(op))"
        case .addDependency(let op, let dependency): "op\(op).addDependency(op\(dependency))"
        case .removeDependency(let op, let dependency): "op\(op).removeDependency(op\(dependency))"
        case .fan(let on, let first, let count, let queue):
            "for n in \(first)..<\(first + count) { let opN = RecordingOp(); opN.addDependency(op\(on)); queues[\(queue)].addOperation(opN) }"
        case .setPriority(let op, let priority): "op\(op).queuePriority = .\(priority)"
        case .priorityStorm(let op, let changes): "for i in 0..<\(changes) { op\(op).queuePriority = i % 2 == 0 ? partner : original }"
        case .cancel(let op): "op\(op).cancel()"
        case .cancelWithError(let op): "op\(op).cancel(with: ModelWorkError.cancelled)"
        case .addCondition(let op, let condition): "op\(op).addCondition(\(condition.swift))"
        case .observe(let op): "op\(op).addObserver(recording); op\(op).observe(\\.isExecuting / \\.isFinished / \\.isCancelled, options: [.old, .new])"
        case .observeDependenciesFromHandler(let op):
            "op\(op).observe(\\.dependencies) { op, _ in op.addDependency(finished); tokens += op.observe(\\.dependencies, options: [.old, .new]) { ... } }"
        case .observeOperationsFromHandler(let queue):
            "queues[\(queue)].observe(\\.operations) { queue, _ in tokens += queue.observe(\\.operations, options: [.old, .new]) { ... } }"
        case .onRun(let op, let action): "op\(op) body: \(action.swift)"
        case .onCallback(let op, let callback): "op\(op).\(callback.swift)"
        case .startByHand(let op): "op\(op).start()"
        case .runUntilQuiet: "resume the queues, wait until nothing more can finish, suspend them again"
        case .keepSuspended(let queue): "queues[\(queue)] stays suspended until the others are done"
        case .suspend(let queue): "queues[\(queue)].isSuspended = true"
        case .resume(let queue): "queues[\(queue)].isSuspended = false"
        case .pause(let microseconds): "sleep \(microseconds) µs"
        }
    }

    /// The operations the step names.
    var operations: [Int] {
        switch self {
        case .make(let op, _), .setPriority(let op, _), .priorityStorm(let op, _), .cancel(let op),
             .cancelWithError(let op), .observe(let op), .observeDependenciesFromHandler(let op),
             .onCallback(let op, _), .startByHand(let op):
            [op]
        case .enqueue(let ops, _): ops
        case .addChild(let op, let group): [op, group]
        case .addDependency(let op, let other), .removeDependency(let op, let other): [op, other]
        case .fan(let on, let first, let count, _): [on] + Array(first..<first + count)
        case .addCondition(let op, let condition):
            if case .dependency(let other) = condition { [op, other] } else { [op] }
        case .onRun(let op, let action):
            switch action {
            case .cancel(let other), .addToCurrentQueue(let other), .produce(let other), .addToOwnGroup(let other),
                 .waitForDependency(let other):
                [op, other]
            }
        case .observeOperationsFromHandler, .runUntilQuiet, .keepSuspended, .suspend, .resume, .pause: []
        }
    }
}
