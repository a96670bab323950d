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
    }
}
