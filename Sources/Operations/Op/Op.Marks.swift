extension Op {
    /// The bits of ``Op/marks``: facts about an operation that are set once, never cleared, and
    /// read without its lock (relaxed, like ``Op/flags``).
    enum Marks {
        /// A finished, older operation holds this one strongly as a dependency (see
        /// ``Op/settleDependencies()``).
        static let heldByFinishedOlderOperation: UInt8 = 1 << 0
        /// A condition checks something or contributed a dependency: the queue adding the
        /// operation then looks at its conditions first (see ``OpQueue/enqueue(_:reserved:)``);
        /// one that only asks for categories or permits needs no look. Set by
        /// ``Op/addCondition(_:)``, before the operation can be added.
        static let conditionsNeedALook: UInt8 = 1 << 1
    }

    /// Whether a finished, older operation holds this one strongly as a dependency.
    final var isHeldByFinishedOlderOperation: Bool {
        marks.load(ordering: .relaxed) & Marks.heldByFinishedOlderOperation != 0
    }

    /// Records that a finished, older operation holds this one strongly as a dependency.
    final func markHeldByFinishedOlderOperation() {
        marks.bitwiseOr(Marks.heldByFinishedOlderOperation, ordering: .relaxed)
    }

    /// Whether the queue adding the operation must look at its conditions first.
    final var conditionsNeedALook: Bool {
        marks.load(ordering: .relaxed) & Marks.conditionsNeedALook != 0
    }

    /// Records that the queue adding the operation must look at its conditions first.
    final func markConditionsNeedALook() {
        marks.bitwiseOr(Marks.conditionsNeedALook, ordering: .relaxed)
    }
}
