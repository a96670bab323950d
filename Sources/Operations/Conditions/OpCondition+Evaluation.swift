// Evaluating conditions, and what they ask for besides a check: exclusivity categories and
// dependencies.

extension OpCondition {
    /// Whether evaluating a condition of `kind` needs a task (it contains an `async` check; see
    /// ``isAsynchronous``).
    static func isAsynchronous(_ kind: Kind) -> Bool {
        switch kind {
        case .evaluate: true
        case .predicate, .noFailedDependencies, .noCancelledDependencies, .mutuallyExclusive, .limited, .dependency, .injection: false
        case .all(let conditions), .any(let conditions): conditions.contains { $0.isAsynchronous }
        case .not(let condition), .ignoringFailure(let condition): condition.isAsynchronous
        }
    }

    /// Whether a condition of `kind` may ask for exclusivity categories or dependencies (see
    /// ``mayAskForMore``).
    static func mayAskForMore(_ kind: Kind) -> Bool {
        switch kind {
        case .predicate, .evaluate, .noFailedDependencies, .noCancelledDependencies, .injection: false
        case .mutuallyExclusive, .limited, .dependency, .all, .any, .not, .ignoringFailure: true
        }
    }

    /// Whether a condition of `kind` only asks for exclusivity categories or permits, and so
    /// always passes: nothing to evaluate (see ``onlyAsksForExclusivity``).
    static func onlyAsksForExclusivity(_ kind: Kind) -> Bool {
        switch kind {
        case .mutuallyExclusive, .limited: true
        case .all(let conditions): conditions.allSatisfy(\.onlyAsksForExclusivity)
        case .ignoringFailure(let condition): condition.onlyAsksForExclusivity
        case .predicate, .evaluate, .noFailedDependencies, .noCancelledDependencies, .any, .not, .dependency, .injection: false
        }
    }

    /// The exclusivity categories a condition of `kind` asks for: its own, and those of
    /// ``all(_:)`` (see ``exclusivityCategories``).
    static func exclusivityCategories(of kind: Kind) -> [String] {
        switch kind {
        case .mutuallyExclusive(let category): [category]
        case .all(let conditions): conditions.flatMap(\.exclusivityCategories)
        case .ignoringFailure(let condition): condition.exclusivityCategories
        case .predicate, .evaluate, .noFailedDependencies, .noCancelledDependencies, .limited, .any, .not, .dependency, .injection: []
        }
    }

    /// The counted categories a condition of `kind` asks for: its own, and those of ``all(_:)``
    /// (see ``limits``).
    static func limits(of kind: Kind) -> [OpLimit] {
        switch kind {
        case .limited(let limit): [limit]
        case .all(let conditions): conditions.flatMap(\.limits)
        case .ignoringFailure(let condition): condition.limits
        case .predicate, .evaluate, .noFailedDependencies, .noCancelledDependencies, .mutuallyExclusive, .any, .not, .dependency, .injection: []
        }
    }

    /// Whether the condition asks for a category of either kind (exclusive or counted).
    var asksForCategories: Bool { asksForExclusiveCategories || asksForPermits }

    /// A ``mutuallyExclusive(_:)`` or limit placed where it would mean nothing in a condition of
    /// `kind` (inside `any` or `not`; see ``misplacedExclusivity``).
    static func misplacedExclusivity(in kind: Kind) -> OpCondition? {
        switch kind {
        case .predicate, .evaluate, .noFailedDependencies, .noCancelledDependencies, .mutuallyExclusive, .limited, .dependency, .injection:
            return nil
        case .all(let conditions):
            return conditions.lazy.compactMap(\.misplacedExclusivity).first
        case .ignoringFailure(let condition):
            return condition.misplacedExclusivity
        case .any(let conditions):
            return conditions.first { $0.asksForCategories } ?? conditions.lazy.compactMap(\.misplacedExclusivity).first
        case .not(let condition):
            return condition.asksForCategories ? condition : condition.misplacedExclusivity
        }
    }

    /// The operations that ``dependency(_:)`` conditions of `kind` contribute as dependencies
    /// (see ``contributedDependencies``).
    static func contributedDependencies(of kind: Kind) -> [Op] {
        switch kind {
        case .dependency(let operation): [operation]
        case .all(let conditions), .any(let conditions): conditions.flatMap(\.contributedDependencies)
        case .not(let condition), .ignoringFailure(let condition): condition.contributedDependencies
        case .predicate, .evaluate, .noFailedDependencies, .noCancelledDependencies, .mutuallyExclusive, .limited, .injection: []
        }
    }

    // MARK: Evaluating

    /// Evaluates the condition for `operation` as its queue would, and returns the verdict,
    /// without cancelling or starting anything: for unit tests of your conditions.
    ///
    /// ```swift
    /// @Test func uploadsWaitForASignedInUser() async {
    ///     let upload = BlockOp {}
    ///     session.signOut()
    ///     #expect(await OpCondition.signedIn.evaluate(for: upload).failure != nil)
    /// }
    /// ```
    ///
    /// `async` checks are awaited in the calling task (cancelling it cancels them). Checks of
    /// dependencies read `operation`'s dependencies as they are now. Categories and permits
    /// (``mutuallyExclusive(_:)``, ``limited(_:permits:)``) pass: they are taken when the
    /// operation starts, not evaluated. A condition made by ``Op/inject(from:_:)`` passes its
    /// producer's value to `operation`, as it would.
    public func evaluate(for operation: Op) async -> Verdict {
        let failure: ConditionFailedError?
        if case .injection(let inject) = kind {
            failure = inject(operation).map { ConditionFailedError(condition: name, underlyingError: $0) }
        } else {
            failure = await checkAsync(operation)
        }
        guard let failure else { return .passed }
        return failure.skipsOperation ? .skipped(failure) : .failed(failure)
    }

    /// The operations this condition makes dependencies of the operation it is added to (those
    /// of ``dependency(_:)``, also inside ``all(_:)``, ``any(_:)``, ``not(_:)`` and
    /// ``ignoringFailure(_:)``), in order.
    public var dependencies: [Op] { contributedDependencies }

    /// The names of the categories of ``limited(_:permits:)`` and
    /// ``rateLimited(_:permits:per:clock:)`` this condition asks for (its own, and those of
    /// ``all(_:)``), in order. (A limit of one permit is a ``mutuallyExclusive(_:)`` category, in
    /// ``exclusivityCategories``.)
    public var countedCategories: [String] { limits.map(\.category) }

    /// Evaluates `conditions` for `operation` in order; returns the failure of the first that
    /// fails (a ``ConditionFailedError``, or the error of an injection), or `nil` if all pass.
    /// None of them may be asynchronous.
    static func evaluateSynchronously(_ conditions: [OpCondition], for operation: Op) -> (any Error)? {
        for condition in conditions {
            if case .injection(let inject) = condition.kind {
                if let failure = inject(operation) { return failure }
            } else if let failure = condition.checkSynchronously(operation) {
                return failure
            }
        }
        return nil
    }

    /// Evaluates `conditions` for `operation` in order, awaiting the `async` ones.
    static func evaluate(_ conditions: [OpCondition], for operation: Op) async -> (any Error)? {
        for condition in conditions {
            if case .injection(let inject) = condition.kind {
                if let failure = inject(operation) { return failure }
            } else if let failure = await condition.checkAsync(operation) {
                return failure
            }
        }
        return nil
    }

    /// The check of a condition that contains no `async` check.
    private func checkSynchronously(_ operation: Op) -> ConditionFailedError? {
        switch kind {
        case .predicate(let check):
            return check(operation) ? nil : ConditionFailedError(condition: name)
        case .evaluate:
            preconditionFailure("Internal inconsistency: the async condition \(name) was evaluated synchronously")
        case .injection:
            misuse("The condition \(name), made by inject(from:_:), was placed inside .all, .any or .not: it passes a value to its operation and is not a check. Call inject(from:_:) on the operation instead.")
        case .noFailedDependencies, .noCancelledDependencies, .mutuallyExclusive, .limited, .dependency:
            return checkOfDependencies(operation)
        case .all(let conditions):
            for condition in conditions {
                if let failure = condition.checkSynchronously(operation) { return failure }
            }
            return nil
        case .any(let conditions):
            var failures: [ConditionFailedError] = []
            for condition in conditions {
                guard let failure = condition.checkSynchronously(operation) else { return nil }
                failures.append(failure)
            }
            return ConditionFailedError(condition: name, underlyingError: failures.last)
        case .not(let condition):
            return condition.checkSynchronously(operation) == nil ? ConditionFailedError(condition: name) : nil
        case .ignoringFailure(let condition):
            return condition.checkSynchronously(operation).map(Self.skipping)
        }
    }

    /// `failure`, marked to skip the operation rather than fail it (see ``ignoringFailure(_:)``).
    private static func skipping(_ failure: ConditionFailedError) -> ConditionFailedError {
        ConditionFailedError(condition: failure.condition, underlyingError: failure.underlyingError, skipsOperation: true)
    }

    private func checkAsync(_ operation: Op) async -> ConditionFailedError? {
        switch kind {
        case .evaluate(let check):
            do {
                return try await check(operation) ? nil : ConditionFailedError(condition: name)
            } catch {
                return ConditionFailedError(condition: name, underlyingError: error)
            }
        case .predicate, .noFailedDependencies, .noCancelledDependencies, .mutuallyExclusive, .limited, .dependency, .injection:
            return checkSynchronously(operation)
        case .all(let conditions):
            for condition in conditions {
                if let failure = await condition.checkAsync(operation) { return failure }
            }
            return nil
        case .any(let conditions):
            var failures: [ConditionFailedError] = []
            for condition in conditions {
                guard let failure = await condition.checkAsync(operation) else { return nil }
                failures.append(failure)
            }
            return ConditionFailedError(condition: name, underlyingError: failures.last)
        case .not(let condition):
            return await condition.checkAsync(operation) == nil ? ConditionFailedError(condition: name) : nil
        case .ignoringFailure(let condition):
            return await condition.checkAsync(operation).map(Self.skipping)
        }
    }

    /// The checks that read the operation's dependencies.
    private func checkOfDependencies(_ operation: Op) -> ConditionFailedError? {
        switch kind {
        case .noFailedDependencies:
            guard let error = operation.dependencies.lazy.compactMap(\.error).first else { return nil }
            return ConditionFailedError(condition: name, underlyingError: error)
        case .noCancelledDependencies:
            return operation.dependencies.contains { $0.isCancelled } ? ConditionFailedError(condition: name) : nil
        case .mutuallyExclusive, .limited:
            return nil
        case .dependency(let dependency):
            if let error = dependency.error { return ConditionFailedError(condition: name, underlyingError: error) }
            return dependency.isCancelled ? ConditionFailedError(condition: name) : nil
        case .predicate, .evaluate, .all, .any, .not, .ignoringFailure, .injection:
            preconditionFailure("Internal inconsistency: \(name) is not a check of dependencies")
        }
    }
}
