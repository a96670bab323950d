extension WorkerPool {
    /// What a worker runs: a closure, or a job of a task that prefers ``OpTaskExecutor`` (kept as
    /// the runtime hands it over, so that no closure is allocated per step of `async` code).
    enum Work {
        /// A closure submitted to the pool.
        case closure(Job)
        /// A job of a task, run with ``OpTaskExecutor/shared`` as its executor.
        case taskJob(UnownedJob)

        /// Runs it on the calling worker.
        @inline(__always)
        func callAsFunction() {
            switch self {
            case .closure(let job): job()
            case .taskJob(let job): OpTaskExecutor.shared.run(job)
            }
        }
    }
}
