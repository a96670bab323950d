extension WorkerPool {
    /// What the monitor saw of the workers.
    struct Load {
        /// Workers running or waiting for a core: doing CPU work.
        var runnableWorkers = 0
        /// Workers sleeping or waiting on I/O in the same job as at the previous look.
        var blockedWorkers = 0
        /// Workers whose state could not be read.
        var unknownWorkers = 0
        /// Workers whose state could not be read and that got nothing done since the previous look.
        var stuckWorkers = 0
        /// Whether any worker got something done (took or finished a job, finished an operation)
        /// since the previous look.
        var madeProgress = false
        /// How many cores the whole process kept busy since the previous look.
        var busyCores = 0.0

        /// Counts one worker: its scheduler `state`, whether it `moved` (got something done since
        /// the previous look), and whether it is `inJob` (a worker asleep outside a job waits for
        /// the pool's own lock, which a preempted submitter may hold on a loaded machine: it is
        /// counted as busy, not as blocked in its work).
        mutating func count(_ state: Worker.SchedulerState, moved: Bool, inJob: Bool) {
            if moved { madeProgress = true }
            switch state {
            case .runnable:
                runnableWorkers += 1
            case .blocked where !moved && inJob:
                blockedWorkers += 1   // asleep in the same job as at the previous look: blocked
            case .blocked:
                runnableWorkers += 1  // between jobs, or in a new one: busy
            case .unknown:
                unknownWorkers += 1
                if !moved { stuckWorkers += 1 }
            }
        }
    }
}
