import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The monitor: a thread that looks at the workers while jobs wait and none is idle, and adds
// threads for blocked workers (see `WorkerPool`).

extension WorkerPool {
    /// A job that keeps a worker for long (a drainer running operations one after another) notes
    /// that it got something done, so that the monitor does not take the worker for stuck. Cheap:
    /// a plain store to the calling worker's record; nothing outside the pool's threads.
    @inline(__always)
    static func noteProgress() {
        ThreadContext.current.pointee.worker?._withUnsafeGuaranteedRef { $0.noteProgress() }
    }

    // MARK: Monitor

    func monitorLoop() {
        var interval = WorkerPool.stallInterval
        var lastProgress: [ObjectIdentifier: UInt64] = [:]
        var lastLook = (cpu: WorkerPool.processCPUTime(), wall: DispatchTime.now().uptimeNanoseconds)
        var exhaustion = ExhaustionWatch()
        while true {
            let workers: [Worker]? = lock.withLock {
                if state.jobs.isEmpty || !state.idleWorkers.isEmpty {
                    state.monitorSleeping = true
                    return nil
                }
                return Array(state.workers.values)
            }
            guard let workers else {
                interval = WorkerPool.stallInterval
                exhaustion = ExhaustionWatch()
                monitorWakeup.wait()
                lastLook = (WorkerPool.processCPUTime(), DispatchTime.now().uptimeNanoseconds)
                continue
            }
            // Give the waiting jobs a moment: a worker about to finish may take them.
            sleep(for: interval)
            var load = Load()
            var progress: [ObjectIdentifier: UInt64] = [:]
            for worker in workers {
                let id = ObjectIdentifier(worker)
                let done = worker.progress.load(ordering: .relaxed)
                progress[id] = done
                load.count(worker.schedulerState, moved: lastProgress[id] != done,
                           inJob: worker.isInJob.load(ordering: .relaxed))
            }
            lastProgress = progress
            let now = (cpu: WorkerPool.processCPUTime(), wall: DispatchTime.now().uptimeNanoseconds)
            if let cpu = now.cpu, let lastCPU = lastLook.cpu, now.wall > lastLook.wall {
                load.busyCores = Double(cpu &- lastCPU) / Double(now.wall - lastLook.wall)
            }
            lastLook = now
            let (spawnCount, isExhausted): (Int, Bool) = lock.withLock {
                guard !state.jobs.isEmpty, state.idleWorkers.isEmpty else { return (0, false) }
                let count = WorkerPool.threadsToAdd(
                    load: load, threads: state.threadCount, starting: state.startingThreads,
                    pending: state.jobs.count, cores: coreCount, limit: maximumThreadCount)
                state.threadCount += count
                state.startingThreads += count
                // Exhausted: every thread of the limit has started, and each one the monitor looked
                // at is blocked.
                let everyWorkerBlocked = load.blockedWorkers + load.stuckWorkers == workers.count
                let allStarted = state.startingThreads == 0 && workers.count == state.threadCount
                return (count, state.threadCount >= maximumThreadCount && allStarted && everyWorkerBlocked)
            }
            // Back off while the cores are busy with work that does not block.
            interval = spawnCount > 0 ? WorkerPool.stallInterval : min(interval * 2, WorkerPool.maximumStallInterval)
            for _ in 0..<spawnCount {
                startWorker()
            }
            if exhaustion.note(isExhausted, after: exhaustionReportDelay) {
                report(.workerPoolExhausted(threads: workers.count, operations: describeHolders()))
            }
        }
    }

    /// How many threads to add when jobs are waiting and no worker is idle.
    ///
    /// Nothing is added while threads are still starting. Where the scheduler's view is known, it
    /// decides: a worker that is running or waiting for a core is doing CPU work (even if other
    /// processes leave it little CPU), a sleeping one is blocked. Nothing is added while at least
    /// one worker per core is doing CPU work: more threads would only share the same cores. When
    /// every worker is blocked, the blocked ones are matched one for one, so a pool whose work all
    /// blocks doubles each interval (a few milliseconds from 2 threads to 64). It does not jump to
    /// cover every waiting job at once: on a loaded machine a busy worker can look asleep for a
    /// whole interval (a page fault, an allocator's lock), and one such look must cost a few
    /// threads, not dozens. Otherwise one thread is added per core left idle.
    ///
    /// Where some worker's state cannot be read, progress decides: one thread is added only if no
    /// worker got anything done since the previous look. A long CPU-bound operation looks stuck as
    /// well, so above ``cpuBoundThreadsPerCore`` threads per core a thread is added only while the
    /// process leaves a core idle.
    ///
    /// At most ``maximumGrowthPerInterval`` at once, and never beyond `limit`.
    static func threadsToAdd(load: Load, threads: Int, starting: Int, pending: Int, cores: Int, limit: Int) -> Int {
        guard pending > 0, starting == 0 else { return 0 }
        let wanted: Int
        if load.unknownWorkers > 0 {
            guard !load.madeProgress else { return 0 }
            if threads >= cores * cpuBoundThreadsPerCore, load.busyCores >= Double(cores) - 0.5 { return 0 }
            wanted = 1
        } else {
            let busy = load.runnableWorkers
            guard busy < cores else { return 0 }
            wanted = busy == 0 ? max(load.blockedWorkers, 1) : cores - busy
        }
        return max(0, min(wanted, maximumGrowthPerInterval, limit - threads))
    }

    /// Where states cannot be read, the threads per core beyond which the pool grows only while
    /// a core is idle.
    static let cpuBoundThreadsPerCore = 4

    /// The most threads added in one stall interval.
    static let maximumGrowthPerInterval = 64

    /// The longest the monitor waits between looks while the cores are busy.
    static let maximumStallInterval: Duration = .milliseconds(8)

    /// The CPU time the whole process has used, in nanoseconds, if the system tells it.
    static func processCPUTime() -> UInt64? {
        var time = timespec()
        guard clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time) == 0 else { return nil }
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    private func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR {
            request = remaining
        }
    }
}
