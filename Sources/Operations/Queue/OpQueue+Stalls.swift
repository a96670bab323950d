// A queue is stalled when it holds operations but can start none and runs none: normal while its
// operations wait for work elsewhere, a sign of a dependency cycle if it lasts.

extension OpQueue {
    /// Checks the queue for a stall again (after a dependency of one of its operations changed,
    /// which may have made or broken a cycle).
    final func rearmStallCheck() {
        let generation: UInt64? = withLock {
            machine.noteGraphChanged()
            return machine.stallCheckIfNeeded()
        }
        if let generation { scheduleStallCheck(generation: generation) }
    }

    /// What the members wait for because of pending barriers.
    final func barrierWaits() -> BarrierWaits {
        withLock { machine.barrierWaits() }
    }

    /// How long a queue must stay stalled before its waiting operations are searched for cycles.
    static let stallCheckDelay: Duration = .milliseconds(50)

    /// Checks a stalled queue again after ``stallCheckDelay``; if it stayed stalled, looks for
    /// dependency cycles among its waiting operations (there may be none: it may just be waiting
    /// for operations that run elsewhere), and reports and watches the ones it finds.
    ///
    /// The checks of every queue wait behind one timer (see ``StallChecks``).
    final func scheduleStallCheck(generation: UInt64) {
        StallChecks.schedule(self, generation: generation)
    }

    /// The check scheduled with `generation` is due. Returns the members to search for cycles
    /// if the queue stayed stalled (the caller searches those of every due queue at once).
    final func stallCheckFired(generation: UInt64) -> [Op] {
        switch withLock({ machine.stallCheckFired(generation: generation) }) {
        case .none:
            return []
        case .later(let newGeneration):
            scheduleStallCheck(generation: newGeneration)
            return []
        case .scan(let members):
            return members
        }
    }
}
