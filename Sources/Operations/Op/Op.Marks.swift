extension Op {
    /// The bits of ``Op/marks``: facts about an operation that are set once, never cleared, and
    /// read without its lock (relaxed, like ``Op/flags``).
    enum Marks {
        /// Another operation counts on this one having no dependency (a finished operation that
        /// holds it strongly, or one sealed with it among its dependencies): if it gets one, it
        /// holds every dependency weakly once finished (see ``Op/isADeadEnd()``).
        static let heldByFinishedOperation: UInt8 = 1 << 0
        /// A condition checks something or contributed a dependency: the queue adding the
        /// operation then looks at its conditions first (see ``OpQueue/enqueue(_:reserved:)``);
        /// one that only asks for categories or permits needs no look. Set by
        /// ``Op/addCondition(_:)``, before the operation can be added.
        static let conditionsNeedALook: UInt8 = 1 << 1
        /// Every dependency the operation held strongly when this was set is a dead end (see
        /// ``Op/isADeadEnd()``), and if it gets another one, it holds all of them weakly once
        /// finished: following strong references from it never comes back to it (see
        /// ``Op/seal()``).
        static let sealed: UInt8 = 1 << 2
    }

    /// Whether another operation counts on this one having no dependency (see
    /// ``Marks/heldByFinishedOperation``).
    final var isHeldByFinishedOperation: Bool {
        marks.load(ordering: .relaxed) & Marks.heldByFinishedOperation != 0
    }

    /// Records that another operation counts on this one having no dependency.
    final func markHeldByFinishedOperation() {
        marks.bitwiseOr(Marks.heldByFinishedOperation, ordering: .relaxed)
    }

    /// Whether the operation is sealed (see ``Marks/sealed``).
    final var isSealed: Bool {
        marks.load(ordering: .relaxed) & Marks.sealed != 0
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
