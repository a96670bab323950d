// The dependency lists of the machine: adding and removing dependencies and dependents, a
// dependency finishing, and holding the dependencies of a finished operation weakly.

extension OpStateMachine {
    // MARK: Links

    /// The dependencies, held strongly, in the order they were added (until they are settled).
    var dependencyList: DependencyList {
        _read {
            if let links { yield links.dependencies } else { yield DependencyList() }
        }
        set { if links != nil || !newValue.isEmpty { ensureLinks().dependencies = newValue } }
        _modify { yield &ensureLinks().dependencies }
    }
    /// Whether a dependency was created after this operation (a "backward" edge, by serial
    /// number): only such a dependency can close a loop of strong references.
    var hasNewerDependency: Bool {
        get { links?.hasNewerDependency ?? false }
        set { if links != nil || newValue { ensureLinks().hasNewerDependency = newValue } }
    }
    /// Whether every dependency is held weakly once the operation is finished: it got one while
    /// an operation counted on its having none, or while it was sealed (see
    /// ``Op/settleDependencies()`` and ``Op/seal()``).
    var weakensEveryDependency: Bool {
        get { links?.weakensEveryDependency ?? false }
        set { if links != nil || newValue { ensureLinks().weakensEveryDependency = newValue } }
    }
    /// Counts the changes of the dependency list, so that a check made twice can tell that the
    /// list did not change in between (see ``DependencyCycle``). Wraps.
    var dependencyVersion: UInt32 {
        get { links?.dependencyVersion ?? 0 }
        set { if links != nil || newValue != 0 { ensureLinks().dependencyVersion = newValue } }
    }

    /// The dependencies, in the order they were added (a settled one that was released is gone).
    var dependencies: [Op] {
        if let settled = extras?.settledDependencies {
            return settled.compactMap(\.operation)
        }
        return dependencyList.array
    }
    /// Operations that counted this one as an unfinished dependency; emptied when it finishes.
    /// Not retained, like Foundation's: a dependent that nobody keeps (not in a queue, no
    /// reference) is released even though this operation has not finished, and removes itself
    /// from the list as it goes (see ``DependentLink``).
    var dependents: DependentList {
        _read {
            if let links { yield links.dependents } else { yield DependentList() }
        }
    }


    /// From this many dependencies on, the list indexes them by identity (see ``DependencyList``).
    static var dependencySetThreshold: Int { DependencyList.indexThreshold }

    /// Whether `operation` is one of the dependencies.
    func lists(_ operation: Op) -> Bool {
        if let settled = extras?.settledDependencies {
            return settled.contains { $0.names(operation) }
        }
        guard let links else { return false }
        return links.dependencies.contains(operation)
    }

    // MARK: Dependencies

    /// The result of adding a dependency.
    enum AddDependencyResult: Equatable {
        /// The dependency was already there; nothing changed.
        case alreadyPresent
        /// The dependency was recorded. `counted` is true if it now holds the operation back.
        case added(counted: Bool)
    }

    /// Records `dependency`. It holds the operation back only if it is unfinished and the
    /// operation has not started (adding a dependency to a started operation has no effect).
    /// `isNewer` says whether the dependency was created after this operation. For an operation
    /// that is finished for good, `holdsWeakly` says whether to hold the new dependency weakly
    /// (see ``Op/addDependency(_:)``).
    mutating func addDependency(_ dependency: Op, dependencyIsUnfinished: Bool, isNewer: Bool,
                                holdsWeakly: Bool = false) -> AddDependencyResult {
        if lists(dependency) {
            return .alreadyPresent
        }
        // The links are used directly: this is the hot path of building a graph.
        let links = ensureLinks()
        links.dependencyVersion = NarrowedCounters.nextDependencyVersion(after: links.dependencyVersion)
        hasHadDependencies = true
        if isNewer { links.hasNewerDependency = true }
        let isWeak = lifecycle == .finished && (holdsWeakly || links.weakensEveryDependency)
        if isWeak {
            weaken([])
            settle()
        }
        if let settled = extras?.settledDependencies {
            extras!.settledDependencies = settled + [isWeak ? .weak(WeakOp(dependency)) : .strong(dependency)]
            return .added(counted: false)
        }
        let counts = dependencyIsUnfinished && countsNewDependencies
        links.dependencies.append(dependency, counted: counts)
        if counts {
            links.unfinishedDependencyCount += 1
            // Not ready any more: the gate closes again (see `OpStateMachine+Gates.swift`).
            closeGateForNewDependency()
        }
        return .added(counted: counts)
    }

    /// Called on the dependency's side of `addDependency`: remembers the dependent unless this
    /// operation has finished already. Returns whether the dependent must count it.
    mutating func addDependent(_ dependent: Op) -> Bool {
        switch lifecycle {
        case .pending, .executing:
            ensureLinks().dependents.append(DependentLink(dependent))
            return true
        case .finishing, .finished:
            return false
        }
    }

    /// Forgets the dependent whose serial number is `dependentSerial` (called on the
    /// dependency's side of `removeDependency`, and by a dependent being deinitialized).
    /// Returns whether it was still waiting for this operation.
    mutating func removeDependent(serial dependentSerial: UInt64) -> Bool {
        links?.dependents.remove(serial: dependentSerial) ?? false
    }

    /// Removes `dependency`; `wasCounted` says whether the dependency still listed this operation
    /// as a dependent (it had not begun to finish).
    ///
    /// A dependency that has begun to finish took its list of dependents, and tells them one by
    /// one, outside its lock: this operation may still count it, though its finish is on the way.
    /// It counts it no more from now on (it is ready at once if nothing else holds it back), and
    /// the finish, when it arrives, is ignored.
    mutating func removeDependency(_ dependency: Op, wasCounted: Bool) -> (removed: Bool, action: ReadinessAction) {
        dependencyVersion = NarrowedCounters.nextDependencyVersion(after: dependencyVersion)
        if let settled = extras?.settledDependencies {
            guard let index = settled.firstIndex(where: { $0.names(dependency) }) else { return (false, .none) }
            extras!.settledDependencies!.remove(at: index)
            return (true, .none)
        }
        // The caller holds `dependency`: removing it here does not release it.
        guard let (_, edgeWasCounted) = dependencyList.remove(dependency) else {
            return (false, .none)
        }
        guard edgeWasCounted else { return (true, .none) }
        if !wasCounted {
            // Its finish is on the way (see above).
            ensureExtras().ignoredFinishes.append(dependency.serial)
        }
        unfinishedDependencyCount -= 1
        return (true, scheduleIfReady())
    }

    /// `dependency`, which this operation counted, has finished. Its finish is ignored if the
    /// operation removed it meanwhile (see ``removeDependency(_:wasCounted:)``).
    mutating func dependencyFinished(_ dependency: Op) -> ReadinessAction {
        if let extras, !extras.ignoredFinishes.isEmpty,
           let index = extras.ignoredFinishes.firstIndex(of: dependency.serial) {
            extras.ignoredFinishes.remove(at: index)
            return .none
        }
        guard let links, links.unfinishedDependencyCount > 0 else {
            preconditionFailure("Internal inconsistency: dependency count underflow in \(lifecycle)")
        }
        // Listed unless the list was settled (the operation finished, cancelled, first).
        let wasCounted = links.dependencies.uncount(dependency)
        #if OPERATIONS_INTERNAL_CHECKS
        precondition(wasCounted || extras?.settledDependencies != nil,
                     "Internal inconsistency: a finish from a dependency that is not counted")
        #endif
        _ = wasCounted
        links.unfinishedDependencyCount -= 1
        return scheduleIfReady()
    }

    /// The first dependency still counted, if any (for tests).
    var firstCountedDependency: Op? {
        links?.dependencies.firstCounted
    }


    /// The dependencies created after this operation (whose serial number is `serial`), that it
    /// holds strongly: one, usually, without allocating. Read from the settled list once there is
    /// one (a dependency added to the finished operation before it settled moved them there).
    func newerDependencies(than serial: UInt64) -> SmallList<Op> {
        var newer = SmallList<Op>()
        _ = everyStrongDependency { dependency in
            if dependency.serial > serial { newer.append(dependency) }
            return true
        }
        return newer
    }

    /// Whether every dependency held strongly satisfies `predicate` (true if there is none): the
    /// settled list's strong entries once there is one, the dependency list before. Stops at the
    /// first that does not.
    func everyStrongDependency(satisfies predicate: (Op) -> Bool) -> Bool {
        if let settled = extras?.settledDependencies {
            for case .strong(let dependency) in settled where !predicate(dependency) {
                return false
            }
            return true
        }
        for dependency in dependencyList where !predicate(dependency) {
            return false
        }
        return true
    }

    /// A finished operation holds this one strongly, counting on its having no dependency, and it
    /// has one now: hold every dependency weakly once finished (at once, if it is finished
    /// already).
    mutating func weakenEveryDependency() {
        weakensEveryDependency = true
        weaken([])
    }

    /// Holds the dependencies in `operations` weakly from now on (every dependency, if
    /// `weakensEveryDependency`). Called once the operation is finished for good: it needs its
    /// dependencies no more, and only lists them.
    mutating func weaken(_ operations: Set<ObjectIdentifier>) {
        guard lifecycle == .finished, !operations.isEmpty || weakensEveryDependency else { return }
        settle()
        let every = weakensEveryDependency
        extras!.settledDependencies = extras!.settledDependencies!.map { dependency in
            guard case .strong(let operation) = dependency,
                  every || operations.contains(ObjectIdentifier(operation)) else { return dependency }
            return .weak(WeakOp(operation))
        }
    }

    /// Moves the dependencies to the list that can hold some of them weakly, if not done yet.
    mutating func settle() {
        guard extras?.settledDependencies == nil else { return }
        let extras = ensureExtras()
        extras.settledDependencies = dependencyList.map { .strong($0) }
        dependencyList = DependencyList()
    }

    /// Empties the dependency list, returning the operations it held strongly: used when the
    /// operation is deallocated, to release long chains without deep recursion.
    mutating func takeDependencies() -> SmallList<Op> {
        var taken = links?.dependencies.takeAll() ?? SmallList()
        unfinishedDependencyCount = 0
        if let extras {
            if let settled = extras.settledDependencies {
                for case .strong(let dependency) in settled {
                    taken.append(dependency)
                }
                extras.settledDependencies = nil
            }
        }
        return taken
    }

    /// The dependencies that hold the operation back, which list it as a dependent (those
    /// that have not finished), when some do; otherwise empty.
    var unfinishedDependencies: [Op] {
        guard unfinishedDependencyCount > 0 else { return [] }
        return dependencies.filter { $0.flags.load(ordering: .acquiring) & Op.Flags.finished == 0 }
    }
}
