/// A check that an operation must pass before it runs, after every dependency has finished.
///
/// Add conditions with ``Op/addCondition(_:)`` before the operation is added to a queue. When the
/// operation becomes ready, its queue evaluates the conditions, in the order they were added, as
/// a step of their own: readiness is never overridden, so an operation can never be stuck on a
/// condition. Synchronous conditions run on the thread that made the operation ready; if any
/// condition is `async` (``evaluate(_:_:)``), they all run in a task, which holds no thread while
/// it waits. Then the operation goes on its queue's ready list; an exclusive one takes its
/// categories (``mutuallyExclusive(_:)``), and a limited one its permits (``limited(_:permits:)``,
/// ``rateLimited(_:permits:per:clock:)``), when its queue starts it.
///
/// If a condition fails, the operation is cancelled: its body does not run, and its
/// ``Op/error`` is a ``ConditionFailedError`` naming the condition.
///
/// The verdict follows from the dependencies: a dependency added to an operation that is ready
/// (past its conditions, evaluating them, or waiting for its categories) makes it wait again, and
/// its conditions are evaluated again once that dependency has finished (a verdict reached
/// meanwhile is ignored). Cancelling the operation cancels the task of its `async` conditions,
/// and ends the wait of a ``Op/start()`` called by hand.
///
/// ```swift
/// let upload = BlockOp { upload(file) }
/// upload.addDependency(signIn)
/// upload.addCondition(.noFailedDependencies)
/// upload.addCondition(.predicate("file is small") { _ in file.size < 10_000_000 })
/// upload.addCondition(.mutuallyExclusive("network"))
/// queue.addOperation(upload)
/// ```
public struct OpCondition: Sendable, CustomStringConvertible {
    /// What the condition is, worked out once when it is made: a condition is declared once and
    /// added to many operations, and a copy is one reference.
    private let storage: Storage

    /// The name used in ``ConditionFailedError`` and in diagnostics.
    public var name: String { storage.name }
    /// What the condition checks.
    var kind: Kind { storage.kind }
    /// The ``mutuallyExclusive(_:)`` categories the condition asks for (its own, and those of
    /// ``all(_:)`` and ``ignoringFailure(_:)``), in order; `limited(c, permits: 1)` is one.
    public var exclusivityCategories: [String] { storage.exclusivityCategories }
    /// The counted categories (limits and rate limits) the condition asks for: its own, and those
    /// of ``all(_:)``.
    var limits: [OpLimit] { storage.limits }
    /// Whether evaluating the condition needs a task (it contains an `async` check).
    var isAsynchronous: Bool { storage.isAsynchronous }
    /// Whether the condition only asks for exclusivity categories or permits, and so always
    /// passes: nothing to evaluate.
    var onlyAsksForExclusivity: Bool { storage.onlyAsksForExclusivity }
    /// Whether the condition may ask for exclusivity categories or dependencies (a cheap test
    /// that spares the common checks collecting them).
    var mayAskForMore: Bool { storage.mayAskForMore }
    /// A ``mutuallyExclusive(_:)`` or limit placed where it would mean nothing (inside `any` or
    /// `not`), if any.
    var misplacedExclusivity: OpCondition? { storage.misplacedExclusivity }
    /// The operations that ``dependency(_:)`` conditions contribute as dependencies.
    var contributedDependencies: [Op] { storage.contributedDependencies }
    /// Whether the condition contributes dependencies, asks for exclusive categories or for
    /// permits (read without copying the lists).
    var contributesDependencies: Bool { storage.contributesDependencies }
    var asksForExclusiveCategories: Bool { storage.asksForExclusiveCategories }
    var asksForPermits: Bool { storage.asksForPermits }

    /// The condition's parts, immutable.
    private final class Storage: Sendable {
        let name: String
        let kind: Kind
        let exclusivityCategories: [String]
        let limits: [OpLimit]
        let isAsynchronous: Bool
        let onlyAsksForExclusivity: Bool
        let mayAskForMore: Bool
        let misplacedExclusivity: OpCondition?
        let contributedDependencies: [Op]
        let contributesDependencies: Bool
        let asksForExclusiveCategories: Bool
        let asksForPermits: Bool

        init(name: String, kind: Kind) {
            self.name = name
            self.kind = kind
            self.exclusivityCategories = OpCondition.exclusivityCategories(of: kind)
            self.limits = OpCondition.limits(of: kind)
            self.isAsynchronous = OpCondition.isAsynchronous(kind)
            self.onlyAsksForExclusivity = OpCondition.onlyAsksForExclusivity(kind)
            self.mayAskForMore = OpCondition.mayAskForMore(kind)
            self.misplacedExclusivity = OpCondition.misplacedExclusivity(in: kind)
            self.contributedDependencies = OpCondition.contributedDependencies(of: kind)
            self.contributesDependencies = !contributedDependencies.isEmpty
            self.asksForExclusiveCategories = !exclusivityCategories.isEmpty
            self.asksForPermits = !limits.isEmpty
        }
    }

    /// What the condition checks.
    indirect enum Kind: Sendable {
        /// A synchronous check.
        case predicate(@Sendable (Op) -> Bool)
        /// An `async` check that may throw.
        case evaluate(@Sendable (Op) async throws -> Bool)
        /// No dependency finished with an error.
        case noFailedDependencies
        /// No dependency was cancelled.
        case noCancelledDependencies
        /// Holds the category while the operation runs; always passes.
        case mutuallyExclusive(String)
        /// Takes a permit of a counted category as the operation starts; always passes (see
        /// ``OpCondition/limited(_:permits:)``).
        case limited(OpLimit)
        /// Every condition passes (evaluated in order; the first failure is reported).
        case all([OpCondition])
        /// At least one condition passes.
        case any([OpCondition])
        /// The condition fails.
        case not(OpCondition)
        /// The condition, whose failure skips the operation rather than failing it.
        case ignoringFailure(OpCondition)
        /// The operation, a dependency added by the condition, finished without an error and
        /// without being cancelled.
        case dependency(Op)
        /// An injection (``Op/inject(from:_:)``): passes the producer's value to the operation
        /// and returns `nil`, or returns the error to cancel the operation with.
        case injection(@Sendable (Op) -> (any Error)?)
    }

    init(name: String, kind: Kind) {
        storage = Storage(name: name, kind: kind)
    }

    // MARK: Built-ins

    /// Fails if a dependency finished with an error (a non-`nil` ``Op/error``); the failure
    /// carries the first such error.
    public static let noFailedDependencies = OpCondition(name: "noFailedDependencies", kind: .noFailedDependencies)

    /// Fails if a dependency was cancelled.
    public static let noCancelledDependencies = OpCondition(name: "noCancelledDependencies", kind: .noCancelledDependencies)

    /// A synchronous check: the condition passes when `check` returns `true`. It runs on the
    /// thread that made the operation ready; keep it short, or use ``evaluate(_:_:)``.
    public static func predicate(_ name: String, _ check: @escaping @Sendable (Op) -> Bool) -> OpCondition {
        OpCondition(name: name, kind: .predicate(check))
    }

    /// An `async` check: the condition passes when `check` returns `true`, and fails when it
    /// returns `false` or throws (the failure carries the error). It runs in a task, holding no
    /// thread while it waits; cancelling the operation cancels the task (check
    /// `Task.isCancelled`, or await cancellable calls, to stop early).
    ///
    /// The task keeps the operation alive until `check` returns. A check that waits for an
    /// outside event should end when its task is cancelled.
    public static func evaluate(_ name: String, _ check: @escaping @Sendable (Op) async throws -> Bool) -> OpCondition {
        OpCondition(name: name, kind: .evaluate(check))
    }

    /// Operations with this condition and the same `category` never execute at the same time, in
    /// any queue of the process.
    ///
    /// A category is granted only to an operation that runs now: the operation takes it when its
    /// queue starts it (it has a slot, the queue is not suspended, no barrier holds it back), or
    /// on the thread that calls ``Op/start()``, and gives it back when it finishes. While the
    /// category is taken, the operation waits without holding a slot of its queue; waiting
    /// requests are served in the order the operations passed their other conditions. An operation whose
    /// queue is suspended keeps nobody waiting: it asks again once the queue resumes. See
    /// <doc:ComposingOperations> for how several categories and groups are handled.
    ///
    /// It always passes; use it on its own or inside ``all(_:)`` (inside ``any(_:)`` or
    /// ``not(_:)`` it would mean nothing, and ``Op/addCondition(_:)`` traps).
    public static func mutuallyExclusive(_ category: String) -> OpCondition {
        OpCondition(name: "mutuallyExclusive(\(category))", kind: .mutuallyExclusive(category))
    }

    /// Passes when every condition of `conditions` passes; they are evaluated in order, and the
    /// first failure is the one reported.
    public static func all(_ conditions: [OpCondition]) -> OpCondition {
        OpCondition(name: "all(\(conditions.map(\.name).joined(separator: ", ")))", kind: .all(conditions))
    }

    /// Passes when at least one condition of `conditions` passes (evaluated in order, stopping at
    /// the first that passes). An empty list fails.
    public static func any(_ conditions: [OpCondition]) -> OpCondition {
        OpCondition(name: "any(\(conditions.map(\.name).joined(separator: ", ")))", kind: .any(conditions))
    }

    /// Passes when `condition` fails.
    public static func not(_ condition: OpCondition) -> OpCondition {
        OpCondition(name: "not(\(condition.name))", kind: .not(condition))
    }

    /// Makes `operation` a dependency that runs first (ProcedureKit's "condition dependency":
    /// ask for permission, then do the work), and passes when it finished without an error and
    /// without being cancelled.
    ///
    /// `operation` is added to the queue of the operation that has the condition (to its group,
    /// if it is a group's child) when that one is added, unless it is in a queue or a child of a
    /// group already: it then runs where it is (a group's child in its group, which must be run
    /// for the condition to pass).
    public static func dependency(_ operation: Op) -> OpCondition {
        OpCondition(name: "dependency(\(operation.description))", kind: .dependency(operation))
    }

    /// A condition whose failure skips the operation instead of failing it: when `condition`
    /// fails, the operation is cancelled with no ``Op/error`` (its observers hear `didCancel` with
    /// no error), and its dependents see a cancellation, not a failure.
    ///
    /// Use it where not running is an expected outcome rather than an error, as ProcedureKit's
    /// "condition not satisfied": a refresh that is pointless while offline, a step that applies
    /// only to some accounts. Any other failed condition makes ``ConditionFailedError`` the
    /// operation's error, so that a failure is never silent.
    ///
    /// ```swift
    /// let sync = BlockOp { syncDrafts() }
    /// sync.addCondition(.ignoringFailure(.predicate("online") { _ in network.isOnline }))
    /// queue.addOperation(sync)   // offline: skipped, `sync.isCancelled`, `sync.error == nil`
    /// ```
    ///
    /// Inside ``all(_:)`` it skips the operation when it is the first member to fail; inside
    /// ``any(_:)`` or ``not(_:)`` its failure counts as any other. The categories, permits and
    /// dependencies `condition` asks for are asked for as without the wrapper.
    public static func ignoringFailure(_ condition: OpCondition) -> OpCondition {
        OpCondition(name: "ignoringFailure(\(condition.name))", kind: .ignoringFailure(condition))
    }

    /// The condition's name.
    public var description: String { name }
}
