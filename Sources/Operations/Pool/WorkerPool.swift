import Dispatch
import Synchronization
import OperationsRuntimeShims

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process-wide pool of threads that runs operations.
///
/// Foundation's OperationQueue on Linux relies on libdispatch's pool, which adds a thread for
/// blocked work only about once a second. This pool keeps about one busy thread per core for
/// CPU-bound work and adds threads promptly when the work blocks:
///
/// - A job is handed to an idle worker if there is one (most recently idle first).
/// - Otherwise, while fewer threads than cores exist, a new thread is started at once.
/// - Waiting jobs are served by quality of service, the highest class first, with aging: a class
///   passed over ``WorkerPool/JobQueue/starvationLimit`` times is served next, so none waits
///   forever. A job of a higher class than every running one gets a new thread at once, even
///   above the core count, so it does not wait for lower-class work to end.
/// - The library's own short jobs (timers' handlers) have a lane above every class, and get a
///   thread at once while every worker runs users' work: a timeout fires on time under any load.
/// - Otherwise a monitor thread looks after ``WorkerPool/stallInterval`` at each worker.
///   - Where the scheduler tells what a thread is doing (`/proc/self/task/<tid>/stat` on Linux,
///     Mach `thread_info` on Apple platforms), a worker counts as blocked when it sleeps in the
///     same job as at the previous look (asleep between jobs, it waits for the pool's own lock,
///     and counts as busy). If fewer workers than cores are doing CPU work while
///     jobs wait, the others are blocked (sleeping, waiting on I/O), and it starts more threads
///     (see ``WorkerPool/threadsToAdd(load:threads:starting:pending:cores:limit:)``).
///   - Where it cannot tell (a restricted `/proc`, other systems, or
///     `OPERATIONS_SCHEDULER_STATE=unavailable` in the environment), the pool decides from
///     progress: it adds one thread only when jobs wait and no worker got anything done (a job
///     or an operation finished) since the previous look. A backlog of short CPU-bound
///     operations makes progress all the time and keeps about one thread per core; work that
///     blocks makes none and gets a thread per look, within milliseconds.
///
///   Never beyond ``WorkerPool/maximumThreadCount``. While the cores are busy, it looks less
///   often.
/// - Threads above the core count that stay idle for ``WorkerPool/idleTimeout`` exit.
/// - When the pool is at its limit and every worker has been blocked for over a second while
///   jobs wait, it reports it once to ``OpDiagnostics``, naming the operations that hold the
///   workers.
///
/// Jobs are plain closures; the pool never holds its lock while running one.
final class WorkerPool: @unchecked Sendable {
    // @unchecked Sendable: all mutable state lives in `state`, read and written only with `lock`
    // held (here and in the monitor, `WorkerPool+Monitor.swift`); `pendingJobs` is an atomic
    // read without the lock as a hint only; the other members are immutable.

    /// The shared pool.
    static let shared = WorkerPool()

    typealias Job = @Sendable () -> Void

    /// How long the monitor waits for progress before it checks for blocked workers.
    static let stallInterval: Duration = .milliseconds(1)

    /// How long a thread above the core count stays idle before it exits.
    static let idleTimeout: DispatchTimeInterval = .seconds(5)

    /// The number of cores; the pool aims to keep this many workers on the CPU.
    let coreCount: Int

    /// The most threads the pool starts. `OPERATIONS_MAX_THREADS` in the environment overrides it.
    let maximumThreadCount: Int

    /// The number of jobs waiting for a worker, readable without the lock (a hint for drainers
    /// deciding whether to yield; relaxed because nothing is published through it).
    let pendingJobs = Atomic<Int>(0)

    /// Whether the workers' scheduler states are read (see ``SchedulerStateReader/isAllowed``).
    let readsSchedulerState: Bool

    /// How long every worker must stay blocked, with the pool at its limit and jobs waiting,
    /// before it is reported.
    let exhaustionReportDelay: Duration

    /// Names the operations that hold the workers, for the report.
    let describeHolders: @Sendable () -> [String]

    /// Where the report goes.
    let report: @Sendable (OpDiagnostics.Diagnostic) -> Void

    let lock = Lock()
    // Unchecked exclusivity on the hot path, checked in the checked build (see `Lock.swift`).
    #if OPERATIONS_INTERNAL_CHECKS
    var state = State()
    #else
    @exclusivity(unchecked) var state = State()
    #endif
    let monitorWakeup = DispatchSemaphore(value: 0)

    struct State {
        var jobs = JobQueue()
        /// How many workers run a job of each lane (by rank: ``JobQueue/libraryRank``, then
        /// ``JobQueue/rank(of:)``).
        var runningByRank = [Int](repeating: 0, count: JobQueue.laneCount)
        var idleWorkers: [Worker] = []
        var workers: [ObjectIdentifier: Worker] = [:]
        var threadCount = 0
        /// Threads started but not yet taking jobs.
        var startingThreads = 0
        var monitorRunning = false
        var monitorSleeping = false
    }

    init(coreCount: Int = WorkerPool.detectCoreCount(), maximumThreadCount: Int? = nil,
         readsSchedulerState: Bool = SchedulerStateReader.isAllowed,
         exhaustionReportDelay: Duration = .seconds(1),
         describeHolders: @escaping @Sendable () -> [String] = { QueueRegistry.operationsOnWorkerPool().map(\.description) },
         report: @escaping @Sendable (OpDiagnostics.Diagnostic) -> Void = { OpDiagnostics.report($0) }) {
        self.readsSchedulerState = readsSchedulerState
        self.exhaustionReportDelay = exhaustionReportDelay
        self.describeHolders = describeHolders
        self.report = report
        self.coreCount = max(1, coreCount)
        if let maximumThreadCount {
            self.maximumThreadCount = max(self.coreCount, maximumThreadCount)
        } else if let text = getenv("OPERATIONS_MAX_THREADS"), let value = Int(String(cString: text)), value > 0 {
            self.maximumThreadCount = max(self.coreCount, value)
        } else {
            self.maximumThreadCount = max(256, self.coreCount * 32)
        }
    }

    /// Runs `job` on a pool thread as soon as one is free. While jobs wait, those of a higher
    /// `qualityOfService` go first, though no class waits forever (see ``JobQueue``); on Apple
    /// platforms, a job also runs on a thread of its class.
    func submit(qualityOfService: DispatchQoS.QoSClass = .default, _ job: @escaping Job) {
        submit(rank: JobQueue.rank(of: qualityOfService)) {
            $0.append(job, qualityOfService: qualityOfService)
        }
    }

    /// Runs `job`, a job of a task whose executor is ``OpTaskExecutor``, on a pool thread as soon
    /// as one is free, as ``submit(qualityOfService:_:)`` runs a closure.
    func submit(taskJob job: UnownedJob, qualityOfService: DispatchQoS.QoSClass) {
        submit(rank: JobQueue.rank(of: qualityOfService)) {
            $0.append(taskJob: job, qualityOfService: qualityOfService)
        }
    }

    /// Runs `job`, a short job of the library's own on behalf of an operation of the class
    /// `qualityOfService` (a timer's handler: a timeout passed, a ``DelayOp`` ended), ahead of
    /// every waiting job of the users' work. While every worker is busy with such work, it gets a
    /// thread of its own at once, so that a timer fires on time however long that work runs.
    func submitLibraryWork(qualityOfService: DispatchQoS.QoSClass, _ job: @escaping Job) {
        submit(rank: JobQueue.libraryRank) {
            $0.appendLibraryWork(job, qualityOfService: qualityOfService)
        }
    }

    /// Adds a job of the lane `rank` with `append`, and hands it to a worker.
    @inline(__always)
    private func submit(rank: Int, _ append: (inout JobQueue) -> Void) {
        enum Action { case wake(Worker), spawn, watch(startMonitor: Bool), none }
        let action: Action = lock.withLock {
            append(&state.jobs)
            pendingJobs.add(1, ordering: .relaxed)
            if let worker = state.idleWorkers.popLast() {
                return .wake(worker)
            }
            if state.threadCount < coreCount || preempts(rank) {
                state.threadCount += 1
                state.startingThreads += 1
                return .spawn
            }
            if !state.monitorRunning {
                state.monitorRunning = true
                return .watch(startMonitor: true)
            }
            if state.monitorSleeping {
                state.monitorSleeping = false
                return .watch(startMonitor: false)
            }
            return .none
        }
        switch action {
        case .wake(let worker):
            worker.wakeup.signal()
        case .spawn:
            startWorker()
        case .watch(let startMonitor):
            if startMonitor {
                if !startThread({ [self] in monitorLoop() }) {
                    lock.withLock { state.monitorRunning = false }
                }
            } else {
                monitorWakeup.signal()
            }
        case .none:
            break
        }
    }

    /// Whether a job of `rank` gets a thread of its own although every core has one: when every
    /// busy worker runs work of a lower lane and no thread is starting already, so that a
    /// `.userInitiated` job does not wait for a `.background` one to end, nor a timer's handler
    /// for users' work (it shares the cores with it meanwhile; the extra thread retires once
    /// idle). Call with the lock held.
    private func preempts(_ rank: Int) -> Bool {
        guard state.startingThreads == 0, state.threadCount < maximumThreadCount else { return false }
        var busy = 0
        for (laneRank, running) in state.runningByRank.enumerated() {
            if laneRank <= rank, running > 0 { return false }
            busy += running
        }
        return busy > 0
    }

    /// A snapshot for tests and diagnostics.
    var statistics: (threads: Int, idle: Int, pending: Int) {
        lock.withLock { (state.threadCount, state.idleWorkers.count, state.jobs.count) }
    }

    // MARK: Workers

    private func workerLoop() {
        let worker = Worker(readsSchedulerState: readsSchedulerState)
        lock.withLock {
            state.workers[ObjectIdentifier(worker)] = worker
            state.startingThreads -= 1
        }
        // Alive as long as this loop: the thread's context may name it without retaining it.
        ThreadContext.current.pointee.worker = Unmanaged.passUnretained(worker)
        defer { ThreadContext.current.pointee.worker = nil }
        var runningRank: Int?
        while true {
            lock.lock()
            if let rank = runningRank {
                state.runningByRank[rank] -= 1
                runningRank = nil
            }
            if let (job, qualityOfService, rank) = state.jobs.popFirst() {
                state.runningByRank[rank] += 1
                runningRank = rank
                lock.unlock()
                worker.beginJob()
                pendingJobs.subtract(1, ordering: .relaxed)
                worker.adopt(qualityOfService)
                job()
                worker.endJob()
                continue
            }
            state.idleWorkers.append(worker)
            lock.unlock()

            waitForWork(worker)
            if worker.isRetired { return }
        }
    }

    /// Parks an idle worker until a submitter hands it a job, or retires it after
    /// ``idleTimeout`` if the pool has more threads than cores.
    private func waitForWork(_ worker: Worker) {
        enum Decision { case retire, stayIdle, claimed }
        while worker.wakeup.wait(timeout: .now() + WorkerPool.idleTimeout) == .timedOut {
            let decision: Decision = lock.withLock {
                guard let index = state.idleWorkers.firstIndex(where: { $0 === worker }) else {
                    return .claimed
                }
                guard state.threadCount > coreCount else { return .stayIdle }
                state.idleWorkers.remove(at: index)
                state.workers[ObjectIdentifier(worker)] = nil
                state.threadCount -= 1
                return .retire
            }
            switch decision {
            case .retire:
                worker.isRetired = true
                return
            case .stayIdle:
                continue
            case .claimed:
                // A submitter took this worker just as the wait timed out; its signal is coming.
                worker.wakeup.wait()
                return
            }
        }
    }

    // MARK: Threads

    /// Starts a worker thread, already counted in `threadCount` and `startingThreads`; if the
    /// system refuses, the counts are taken back and the pool carries on with the threads it has.
    func startWorker() {
        if !startThread({ [self] in workerLoop() }) {
            lock.withLock {
                state.threadCount -= 1
                state.startingThreads -= 1
            }
        }
    }

    /// Starts a detached thread running `body`; returns `false` if the system refused.
    func startThread(_ body: @escaping @Sendable () -> Void) -> Bool {
        let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        defer { pthread_attr_destroy(&attributes) }
        #if canImport(Darwin)
        var thread: pthread_t? = nil
        #else
        var thread = pthread_t()
        #endif
        let code = pthread_create(&thread, &attributes, { raw in
            #if canImport(Darwin)
            let body = Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue()
            #else
            let body = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
            #endif
            body.run()
            return nil
        }, box)
        if code != 0 {
            Unmanaged<ThreadBody>.fromOpaque(box).release()
            return false
        }
        return true
    }

    /// The cores the process may run on: on Linux, those of its CPU affinity mask (a container's
    /// cpuset, `taskset`), which may be fewer than the machine's; elsewhere, the cores online.
    static func detectCoreCount() -> Int {
        let online = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        let allowed = Int(operations_allowed_cpu_count())
        if allowed > 0 { return min(online, allowed) }
        return online
    }
}

/// A closure boxed for `pthread_create`'s context pointer.
private final class ThreadBody: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}
