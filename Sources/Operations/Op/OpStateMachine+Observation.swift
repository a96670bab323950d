// How transitions queue the events their observers get. Called inside a transition, with the
// operation's lock held; the registry's own lock is the only one taken.

extension OpStateMachine {
    /// The operation's observers of both kinds and their outbox, if any ever registered.
    var registry: ObserverRegistry? { extras?.registry }

    /// The operation's observer registry, created on first use.
    mutating func ensureRegistry() -> ObserverRegistry {
        let extras = ensureExtras()
        if let registry = extras.registry { return registry }
        let created = ObserverRegistry()
        extras.registry = created
        return created
    }

    /// The registry, if the operation has ``OpObserver``s (they share it with the property
    /// observations: one outbox).
    var observers: ObserverRegistry? { hasObservers ? extras?.registry : nil }

    /// Marks the operation as having ``OpObserver``s and returns its registry, created on first
    /// use.
    mutating func ensureObservers() -> ObserverRegistry {
        hasObservers = true
        return ensureRegistry()
    }

    /// Queues a change of a property that is not a flag for the operation's observers (if any
    /// observe it). Call inside a transition. `hasValues: false` records placeholders (see
    /// ``ObserverRegistry/Record/hasValues``).
    @inline(__always)
    func record<Old, New>(_ property: OpProperty, old: Old, new: New, hasValues: Bool = true) {
        registry?.record(property: property.rawValue, oldValue: old, newValue: new, hasValues: hasValues)
    }

    /// The dependencies, if an observer of ``Op/dependencies`` asked for their values.
    func observedDependencies() -> [Op]? {
        guard let registry, registry.observesValues(OpProperty.dependencies.rawValue) else { return nil }
        return dependencies
    }

    /// Records a change of the dependencies for their observers: with the list before (`old`)
    /// and after if they asked for values, without otherwise (only observations registered before
    /// this change hear of it, and none of them asked for values: registration takes the
    /// operation's lock, as this transition does).
    func recordDependencyChange(from old: [Op]?) {
        guard let registry, registry.observes(OpProperty.dependencies.rawValue) else { return }
        if let old {
            record(.dependencies, old: old, new: dependencies)
        } else {
            record(.dependencies, old: (), new: (), hasValues: false)
        }
    }
}
