extension QueueDump.Gathered {
    /// One member as found under its queue's lock and its own.
    struct Member {
        /// The member.
        let operation: Op
        let lifecycle: OpStateMachine.Lifecycle
        let isCancelled: Bool
        let isReady: Bool
        /// Where it stands with its conditions and exclusivity categories.
        let gate: OpStateMachine.Gate
        let priority: Op.QueuePriority
        /// How many barriers were added to the queue before it.
        let epoch: Int
        let isBarrier: Bool
        /// Its dependencies, if they hold it back (it is pending, not cancelled, and one of them
        /// has not finished); otherwise empty.
        let dependencies: [Op]
        /// The names of its conditions, if it has them still to pass; otherwise empty.
        let conditions: [String]

        /// Reads `operation`'s state under its lock. Call with its queue's lock held
        /// (`membership` belongs to that lock).
        init(_ operation: Op, membership: Op.QueueMembership) {
            self.operation = operation
            epoch = membership.epoch
            isBarrier = membership.isBarrier
            (lifecycle, isCancelled, isReady, gate, priority, dependencies, conditions) = operation.withState { machine in
                let heldByDependencies = machine.lifecycle == .pending && !machine.isCancelled
                    && machine.unfinishedDependencyCount > 0
                let gatesLeft = machine.lifecycle == .pending && (machine.gate == .closed || machine.gate == .evaluating)
                return (machine.lifecycle, machine.isCancelled, machine.isReady, machine.gate, machine.priority,
                        heldByDependencies ? machine.dependencies : [],
                        gatesLeft ? machine.conditions.map(\.name) : [])
            }
        }

        /// The member's state as the dump words it.
        var state: QueueDump.Line.State {
            switch lifecycle {
            case .pending: isCancelled ? .cancelled : isReady ? .ready : .waiting
            case .executing: .executing
            case .finishing, .finished: .finishing
            }
        }
    }
}
