import Dispatch
import Synchronization

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
/// - Otherwise a monitor thread looks again after ``WorkerPool/stallInterval``: if no job was
///   taken in the meantime, it measures how many workers actually used the CPU (per-thread CPU
///   clocks on Linux) and starts enough threads to bring the running count back to the number of
///   cores, up to ``WorkerPool/maximumThreadCount``.
/// - Threads above the core count that stay idle for ``WorkerPool/idleTimeout`` exit.
///
/// Jobs are plain closures; the pool never holds its lock while running one.
final class WorkerPool: @unchecked Sendable {
    // @unchecked Sendable: all mutable state lives in `state`, read and written only with `lock`
    // held; `pendingJobs` is an atomic read without the lock as a hint only.

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

    private let lock = Lock()
    private var state = State()
    private let monitorWakeup = DispatchSemaphore(value: 0)

    private struct State {
        var jobs = RingBuffer<Job>()
        var idleWorkers: [Worker] = []
        var workers: [ObjectIdentifier: Worker] = [:]
        var threadCount = 0
        var monitorRunning = false
        var monitorSleeping = false
    }

    init(coreCount: Int = WorkerPool.detectCoreCount(), maximumThreadCount: Int? = nil) {
        self.coreCount = max(1, coreCount)
        if let maximumThreadCount {
            self.maximumThreadCount = max(self.coreCount, maximumThreadCount)
        } else if let text = getenv("OPERATIONS_MAX_THREADS"), let value = Int(String(cString: text)), value > 0 {
            self.maximumThreadCount = max(self.coreCount, value)
        } else {
            self.maximumThreadCount = max(256, self.coreCount * 32)
        }
    }

    /// Runs `job` on a pool thread as soon as one is free.
    func submit(_ job: @escaping Job) {
        enum Action { case wake(Worker), spawn, watch(startMonitor: Bool), none }
        let action: Action = lock.withLock {
            state.jobs.append(job)
            pendingJobs.add(1, ordering: .relaxed)
            if let worker = state.idleWorkers.popLast() {
                return .wake(worker)
            }
            if state.threadCount < coreCount {
                state.threadCount += 1
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
            startThread { [self] in workerLoop() }
        case .watch(let startMonitor):
            if startMonitor {
                startThread { [self] in monitorLoop() }
            } else {
                monitorWakeup.signal()
            }
        case .none:
            break
        }
    }

    /// A snapshot for tests and diagnostics.
    var statistics: (threads: Int, idle: Int, pending: Int) {
        lock.withLock { (state.threadCount, state.idleWorkers.count, state.jobs.count) }
    }

    // MARK: Workers

    private func workerLoop() {
        let worker = Worker()
        lock.withLock { state.workers[ObjectIdentifier(worker)] = worker }
        while true {
            lock.lock()
            if let job = state.jobs.popFirst() {
                lock.unlock()
                pendingJobs.subtract(1, ordering: .relaxed)
                job()
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

    // MARK: Monitor

    private func monitorLoop() {
        while true {
            let workers: [Worker]? = lock.withLock {
                if state.jobs.isEmpty || !state.idleWorkers.isEmpty {
                    state.monitorSleeping = true
                    return nil
                }
                return Array(state.workers.values)
            }
            guard let workers else {
                monitorWakeup.wait()
                continue
            }
            let before = workers.map(\.cpuTime)
            sleep(for: WorkerPool.stallInterval)
            var running = 0
            for (worker, start) in zip(workers, before) where worker.cpuTime - start > WorkerPool.runningThreshold {
                running += 1
            }
            let spawnCount: Int = lock.withLock {
                guard !state.jobs.isEmpty, state.idleWorkers.isEmpty else { return 0 }
                let count = WorkerPool.threadsToAdd(
                    running: running, threads: state.threadCount, pending: state.jobs.count,
                    cores: coreCount, limit: maximumThreadCount)
                state.threadCount += count
                return count
            }
            for _ in 0..<spawnCount {
                startThread { [self] in workerLoop() }
            }
        }
    }

    /// How many threads to add when jobs are waiting and no worker is idle.
    ///
    /// Nothing is added while at least one worker per core is using the CPU: more threads would
    /// only share the same cores. Otherwise the blocked workers are matched one for one (so a pool
    /// whose work all blocks doubles each interval) or the waiting jobs are covered, whichever is
    /// more, at most `maximumGrowthPerInterval` at once and never beyond `limit`.
    static func threadsToAdd(running: Int, threads: Int, pending: Int, cores: Int, limit: Int) -> Int {
        guard pending > 0, running < cores else { return 0 }
        #if os(Linux)
        let blocked = max(0, threads - running)
        #else
        // Without per-thread CPU clocks every busy worker looks blocked; grow one at a time.
        let blocked = 1
        #endif
        let wanted = min(max(blocked, pending, cores - running), maximumGrowthPerInterval)
        return max(0, min(wanted, limit - threads))
    }

    /// The most threads added in one stall interval.
    static let maximumGrowthPerInterval = 64

    /// CPU time (ns) a worker must have used during one stall interval to count as running.
    private static let runningThreshold: Int64 = 250_000

    private func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR {
            request = remaining
        }
    }

    // MARK: Threads

    private func startThread(_ body: @escaping @Sendable () -> Void) {
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
        precondition(code == 0, "Operations: could not start a worker thread (pthread_create returned \(code))")
    }

    static func detectCoreCount() -> Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}

/// A closure boxed for `pthread_create`'s context pointer.
private final class ThreadBody: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}
