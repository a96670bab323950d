// How transitions queue the changes their observers get. Called inside a transition, with the
// operation's lock held; the registry's own lock is the only one taken.

extension OpStateMachine {
    /// Queues a change of a property that is not a flag for the operation's observers (if any
    /// observe it). Call inside a transition.
    func record(_ property: OpProperty, old: Any, new: Any) {
        registry?.record(property: property.rawValue, oldValue: old, newValue: new)
    }

    /// The dependencies, if an observer of ``Op/dependencies`` asked for their values.
    func observedDependencies() -> [Op]? {
        guard let registry, registry.observesValues(OpProperty.dependencies.rawValue) else { return nil }
        return dependencies
    }

    /// Records a change of the dependencies for their observers: with the list before (`old`)
    /// and after if they asked for values, without otherwise.
    func recordDependencyChange(from old: [Op]?) {
        guard let registry, registry.observes(OpProperty.dependencies.rawValue) else { return }
        if let old {
            record(.dependencies, old: old, new: dependencies)
        } else {
            record(.dependencies, old: (), new: ())
        }
    }
}
