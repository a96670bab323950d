import Dispatch

/// The task executor of the library's own threads: the worker pool that runs operations, which
/// grows when its threads block.
///
/// Every `async` piece of an operation runs with this executor as its preference (SE-0417): the
/// `async` body of an ``AsyncOp`` or an ``AsyncBlockOp``, a closure given to
/// `queue.addOperation { try await … }`, and an `async` condition (`OpCondition.evaluate`). So they make progress when Swift's cooperative threads,
/// one per core, are all blocked by synchronous code elsewhere in the process (a blocking call in
/// a task, a synchronous wait, a test framework running synchronous tests).
///
/// Your own tasks can run there too:
///
/// ```swift
/// Task(executorPreference: OpTaskExecutor.shared) {
///     await work()   // on the library's threads, not the cooperative pool
/// }
/// ```
///
/// A job runs at the quality of service that matches its task's priority: `.high` (which is
/// `.userInitiated`) as `.userInitiated`, `.medium` as `.default`, `.utility` (which is `.low`)
/// as `.utility`, `.background` as `.background`. An operation's `async` body gets the priority
/// that matches its ``Op/qualityOfService`` (`.userInteractive` and `.userInitiated` both give
/// `.high`), one step higher or lower within that class for a high or low
/// ``Op/queuePriority``, so its jobs run at the operation's quality of service either way.
public final class OpTaskExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked Sendable: it has no state; the worker pool it hands jobs to is thread-safe.

    /// The executor of the library's worker pool.
    public static let shared = OpTaskExecutor()

    private init() {}

    /// Runs `job` on a thread of the worker pool. The first job of the task of an ``AsyncOp``
    /// started where the thread hands off (an `async` operation finished in its task and started
    /// the next one of its queue) runs on this thread once the
    /// current job returns, without a wake-up of another thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let context = ThreadContext.current
        if case .claiming = context.pointee.taskHandOff {
            context.pointee.taskHandOff = .taken(job)
            return
        }
        submit(job)
    }

    /// Hands `job` to the worker pool.
    private func submit(_ job: UnownedJob) {
        WorkerPool.shared.submit(taskJob: job, qualityOfService: Self.qualityOfService(of: job.priority))
    }

    /// How long a thread keeps running the task jobs handed to it, one after another, while other
    /// jobs wait for a worker, before it gives the next one to the pool.
    private static let handOffTimeSlice: UInt64 = 2_000_000

    /// Runs `job` on this worker, then each task job handed to this thread meanwhile (a chain of
    /// `async` operations, each started as the previous one finished): as long as no other job
    /// waits for a worker, or for up to ``handOffTimeSlice`` while some do.
    func run(_ job: UnownedJob) {
        let context = ThreadContext.current
        let executor = asUnownedTaskExecutor()
        var job = job
        var started: UInt64 = 0
        while true {
            context.pointee.isRunningTaskJob = true
            job.runSynchronously(on: executor)
            context.pointee.isRunningTaskJob = false
            guard case .taken(let next) = context.pointee.taskHandOff else { return }
            context.pointee.taskHandOff = .closed
            WorkerPool.noteProgress()
            if WorkerPool.shared.pendingJobs.load(ordering: .relaxed) > 0 {
                let now = DispatchTime.now().uptimeNanoseconds
                if started == 0 {
                    started = now
                } else if now - started > Self.handOffTimeSlice {
                    submit(next)
                    return
                }
            }
            job = next
        }
    }

    /// The quality of service that matches a job's priority. Task priorities carry the raw
    /// values of Dispatch's classes (`.high` and `.userInitiated` are one level, 25); each class
    /// covers its level and the step on either side that an operation's queue priority adds
    /// (see `TaskPriority.init(_:queuePriority:)`); a priority between those bands gets the
    /// lower class.
    static func qualityOfService(of priority: JobPriority) -> DispatchQoS.QoSClass {
        switch priority.rawValue {
        case 32...: .userInteractive   // 33, which no named priority has
        case (TaskPriority.userInitiated.rawValue - 1)...: .userInitiated
        case (TaskPriority.medium.rawValue - 1)...: .default
        case (TaskPriority.utility.rawValue - 1)...: .utility
        default: .background
        }
    }
}
