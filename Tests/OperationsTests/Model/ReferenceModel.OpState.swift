extension ReferenceModel {
    /// What the model knows about one operation.
    struct OpState: Sendable {
        /// Where the operation belongs.
        enum Home: Hashable, Sendable {
            /// In no queue and no group (yet).
            case free
            case queue(Int)
            case child(Int)
            /// Promised to the queue or group of the operation whose body adds it.
            case reserved(by: Int)
            /// The `.dependency` condition of this operation adds it where that one goes.
            case heldByCondition(of: Int)
        }

        enum Life: Sendable { case pending, executing, finished }

        /// Where the operation stands with its conditions.
        enum Gate: Sendable {
            /// It has none.
            case open
            /// They are evaluated when it is next ready in its queue.
            case closed
            /// They passed (a dependency added later that holds it back closes them again).
            case passed
        }

        let kind: ModelOpKind
        var home: Home = .free
        /// The dependencies in the order they were added; ``ReferenceModel/helper`` is the finished
        /// operation that an observer adds (``ModelCommand/observeDependenciesFromHandler(_:)``).
        var deps: [Int] = []
        var priority: ModelPriority = .normal
        var conditions: [ModelConditionSpec] = []
        var gate: Gate = .open
        var cancelled = false
        var error: ModelErrorKind = .none
        var life: Life = .pending
        var startedByHand = false
        /// Whether the body ran (for a group: whether it executed).
        var ran = false
        /// Whether it joined its queue or group with the operation whose `.dependency` held it.
        var joinedHeld = false
        /// Whether it was cancelled when it started (a group executes anyway).
        var cancelledAtStart = false
        var runPhase: Int?
        var finishPhase: Int?
        /// The dependencies when the body started.
        var depsAtRun: [Int]?
        /// Whether it is on its queue's ready list (or, for a child, scheduled in its group).
        var scheduled = false
        var bodyActions: [ModelBodyAction] = []
        var callbacks: Set<ModelCallback> = []
        /// The `OpObserver` callbacks it must get, if observed.
        var observerEvents: [ModelObserverEvent]?
        /// Whether its state changes are observed, and whether it was cancelled after that.
        var isObserved = false
        var cancelledAfterObserving = false
        var children: [Int] = []
        /// The successive dependency lists since ``ModelCommand/observeDependenciesFromHandler(_:)``.
        var dependencyVersions: [[Int]]?
        /// Whether that observer has not been called yet (it adds ``ReferenceModel/helper`` then).
        var helperPending = false
        /// The index in `dependencyVersions` of the list that first holds the helper.
        var helperVersion: Int?
        /// Whether a condition of it waits until its task is cancelled (its task must end).
        var conditionWaitsForCancellation = false
        /// The operation whose body cancelled it during the phase it finished in, if any.
        var cancelledByBodyOf: Int?
        /// Interleaved sequences: the dependencies it had when it got a home, and those removed since.
        var depsAtHome: [Int]?
        var removedDeps: Set<Int> = []
        /// Interleaved sequences: it was cancelled before it got a home.
        var cancelledBeforeHome = false

        init(kind: ModelOpKind) {
            self.kind = kind
        }

        var isPending: Bool { life == .pending }
        var hasAsynchronousConditions: Bool { conditions.contains(where: \.isAsynchronous) }
        var categories: [Int] { conditions.compactMap(\.category) }
        var isExclusive: Bool { !categories.isEmpty }
        var hasCancellingCondition: Bool {
            conditions.contains { $0 == .cancelsItsOperation || $0 == .cancelsItsOperationAndWaits }
        }
        var queue: Int? {
            if case .queue(let queue) = home { return queue }
            return nil
        }
        var group: Int? {
            if case .child(let group) = home { return group }
            return nil
        }

        /// The dependencies that bind in an interleaved sequence: present when it got a home and
        /// never removed since, so it cannot have become ready before they finished.
        var bindingDeps: [Int] {
            (depsAtHome ?? []).filter { $0 != ReferenceModel.helper && !removedDeps.contains($0) }
        }

        /// Whether a condition of it fails whatever happens (or cancels it): its body never runs.
        var neverRunsByItsConditions: Bool {
            conditions.contains { condition in
                switch condition {
                case .predicate(let value), .evaluate(let value): !value
                case .evaluateThrows, .cancelsItsOperation, .cancelsItsOperationAndWaits: true
                case .not(let value): value
                case .any(let first, let second): !first && !second
                case .noFailedDependencies, .noCancelledDependencies, .exclusive, .dependency: false
                }
            }
        }
    }
}
