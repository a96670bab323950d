import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One pool thread's record: how to wake it, whether it makes progress, and what the scheduler
/// says it is doing.
final class Worker: @unchecked Sendable {
    // @unchecked Sendable: `isRetired` (and `qualityOfService` on Apple platforms) are written
    // and read only by the worker's own thread;
    // `progress` and `isInJob` are atomic; the other members are immutable or thread-safe.

    /// Signalled once for each job handed to this worker while it was idle.
    let wakeup = DispatchSemaphore(value: 0)

    /// Set by the worker's own thread when it leaves the pool.
    var isRetired = false

    /// Counts what the worker got done: jobs taken and finished, and operations finished by a
    /// draining job while other jobs wait. The monitor reads it to tell a worker that makes
    /// progress from one stuck in a job. Written only by the worker's own thread; relaxed: a
    /// progress hint, nothing is published through it.
    let progress = Atomic<UInt64>(0)

    /// Whether the worker is inside a job (between taking it and returning from it). A worker
    /// that sleeps outside a job waits for the pool's own lock, not in blocking work. Written
    /// only by the worker's own thread; relaxed: a hint for the monitor.
    let isInJob = Atomic<Bool>(false)

    /// Where the thread's scheduler state is read from.
    private let reader: SchedulerStateReader

    /// Must be created on the worker's own thread. With `readsSchedulerState` false, the state
    /// is never read (as where the system does not tell it).
    init(readsSchedulerState: Bool) {
        reader = readsSchedulerState ? SchedulerStateReader.forCurrentThread() : .unavailable
    }

    /// Notes progress (called by the worker's own thread only).
    @inline(__always)
    func noteProgress() {
        progress.store(progress.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// The worker took a job and runs it (called by the worker's own thread only).
    @inline(__always)
    func beginJob() {
        noteProgress()
        isInJob.store(true, ordering: .relaxed)
    }

    /// The worker returned from its job (called by the worker's own thread only).
    @inline(__always)
    func endJob() {
        isInJob.store(false, ordering: .relaxed)
        noteProgress()
    }

    #if canImport(Darwin)
    /// The quality-of-service class the thread runs at (its own thread only).
    private var qualityOfService = qos_class_self()
    #endif

    /// Runs the thread at `qualityOfService` for the next job: on Apple platforms, the thread's
    /// class is set (the scheduler favours higher classes); elsewhere the class only orders the
    /// pool's waiting jobs (called by the worker's own thread only).
    @inline(__always)
    func adopt(_ qualityOfService: DispatchQoS.QoSClass) {
        #if canImport(Darwin)
        let wanted = qualityOfService == .unspecified ? QOS_CLASS_DEFAULT : qualityOfService.rawValue
        if wanted != self.qualityOfService, pthread_set_qos_class_self_np(wanted, 0) == 0 {
            self.qualityOfService = wanted
        }
        #endif
    }

    /// What the scheduler says the thread is doing.
    enum SchedulerState {
        /// Running or waiting for a core: it is doing CPU work.
        case runnable
        /// Sleeping or waiting on I/O: it is blocked.
        case blocked
        /// The state could not be read.
        case unknown
    }

    /// The thread's scheduler state, from `/proc` (Linux) or Mach (Apple platforms); `.unknown`
    /// where neither can be read.
    var schedulerState: SchedulerState {
        reader.currentState()
    }
}
