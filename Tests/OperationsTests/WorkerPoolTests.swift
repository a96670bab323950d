import Testing
import Dispatch
import Synchronization
import Foundation
@testable import Operations

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct WorkerPoolTests {
    private func add(runnable: Int = 0, blocked: Int = 0, unknown: Int = 0, stuck: Int = 0,
                     progress: Bool = false, busyCores: Double = 0, threads: Int, starting: Int = 0,
                     pending: Int, cores: Int = 2, limit: Int = 256) -> Int {
        WorkerPool.threadsToAdd(
            load: .init(runnableWorkers: runnable, blockedWorkers: blocked, unknownWorkers: unknown,
                        stuckWorkers: stuck, madeProgress: progress, busyCores: busyCores),
            threads: threads, starting: starting, pending: pending, cores: cores, limit: limit)
    }

    // MARK: Known scheduler states

    /// A process confined to fewer cores than the machine has (a container's cpuset, `taskset`)
    /// counts only those: the count is that of the affinity mask the kernel reports (run the
    /// suite under `taskset -c 0` to see it count one).
    @Test func theCoreCountIsThatOfTheCPUAffinityMask() throws {
        let online = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        guard let line = status?.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) else {
            // Not Linux, or no /proc: every core online counts.
            #expect(WorkerPool.detectCoreCount() == max(1, online))
            return
        }
        let hex = line.dropFirst("Cpus_allowed:".count).filter { $0.isHexDigit }
        let allowed = hex.reduce(0) { $0 + (Int(String($1), radix: 16) ?? 0).nonzeroBitCount }
        #expect(WorkerPool.detectCoreCount() == min(online, allowed))
    }


    @Test func noThreadsAreAddedWhileEveryCoreHasCPUWork() {
        #expect(add(runnable: 2, threads: 2, pending: 10) == 0)
        // Runnable workers that other processes keep off the CPU still have CPU work.
        #expect(add(runnable: 2, blocked: 40, threads: 42, pending: 10) == 0)
    }

    @Test func noThreadsAreAddedWithoutWaitingJobsOrWhileThreadsStart() {
        #expect(add(blocked: 8, threads: 8, pending: 0) == 0)
        #expect(add(blocked: 8, threads: 8, starting: 1, pending: 3) == 0)
        #expect(add(unknown: 8, stuck: 8, threads: 8, starting: 1, pending: 3) == 0)
    }

    @Test func blockedWorkersAreMatchedSoThePoolDoubles() {
        #expect(add(blocked: 8, threads: 8, pending: 1) == 8)
        // Not more, however many jobs wait: one look where busy workers seem asleep (a page
        // fault, an allocator's lock on a loaded machine) must not add dozens of threads.
        #expect(add(blocked: 2, threads: 2, pending: 2_000) == 2)
        #expect(add(blocked: 1, threads: 1, pending: 5) == 1)
    }

    @Test func onlyAWorkerAsleepInTheSameJobCountsAsBlocked() {
        var load = WorkerPool.Load()
        load.count(.blocked, moved: false, inJob: true)    // asleep in its job since the last look
        load.count(.blocked, moved: true, inJob: true)     // asleep in a job it took since
        load.count(.blocked, moved: false, inJob: false)   // asleep outside any job: the pool's lock
        load.count(.runnable, moved: false, inJob: true)
        #expect(load.blockedWorkers == 1 && load.runnableWorkers == 3 && load.madeProgress)
        // Two CPU-bound workers that both wait for the pool's lock (held by a preempted
        // submitter) with thousands of jobs queued: no thread is added.
        var waitingForTheLock = WorkerPool.Load()
        waitingForTheLock.count(.blocked, moved: false, inJob: false)
        waitingForTheLock.count(.blocked, moved: false, inJob: false)
        #expect(WorkerPool.threadsToAdd(load: waitingForTheLock, threads: 2, starting: 0, pending: 2_000,
                                        cores: 2, limit: 256) == 0)
    }

    @Test func anIdleCoreNextToBusyOnesGetsOneThread() {
        #expect(add(runnable: 1, blocked: 1, threads: 2, pending: 3) == 1)
        #expect(add(runnable: 1, blocked: 30, threads: 31, pending: 3, cores: 4) == 3)
    }

    @Test func growthIsBoundedPerIntervalAndByTheLimit() {
        #expect(add(blocked: 200, threads: 200, pending: 1, limit: 1000) == WorkerPool.maximumGrowthPerInterval)
        #expect(add(blocked: 250, threads: 250, pending: 1) == 6)
        #expect(add(blocked: 256, threads: 256, pending: 9) == 0)
    }

    // MARK: Unknown scheduler states: progress decides

    @Test func withUnknownStatesProgressMeansNoNewThread() {
        // CPU-bound work keeps finishing jobs and operations: no thread, however many wait.
        #expect(add(unknown: 2, progress: true, busyCores: 2, threads: 2, pending: 500) == 0)
        #expect(add(unknown: 2, stuck: 1, progress: true, threads: 2, pending: 3) == 0)
    }

    @Test func withUnknownStatesNoProgressAddsOneThreadPerLook() {
        #expect(add(unknown: 2, stuck: 2, threads: 2, pending: 3) == 1)
        #expect(add(unknown: 7, stuck: 7, threads: 7, pending: 300) == 1)
        #expect(add(unknown: 256, stuck: 256, threads: 256, pending: 3) == 0)
    }

    @Test func withUnknownStatesBusyCoresStopGrowthBeyondFourThreadsPerCore() {
        // A long CPU-bound operation looks stuck too; the process's CPU time tells it apart.
        #expect(add(unknown: 8, stuck: 8, busyCores: 1.9, threads: 8, pending: 3) == 0)
        #expect(add(unknown: 8, stuck: 8, busyCores: 0.2, threads: 8, pending: 3) == 1)
        #expect(add(unknown: 7, stuck: 7, busyCores: 2, threads: 7, pending: 3) == 1)
    }

    // MARK: Readers

    @Test func aWorkerKnowsItsSchedulerState() {
        let state = LockedBox<Worker.SchedulerState?>(nil)
        let done = DispatchSemaphore(value: 0)
        WorkerPool.shared.submit {
            let worker = Worker(readsSchedulerState: true)
            state.withLockedValue { $0 = worker.schedulerState }
            done.signal()
        }
        done.wait()
        #if os(Linux)
        if SchedulerStateReader.isAllowed {
            #expect(state.withLockedValue { $0 } == .runnable)   // it reads its own state while running
        } else {
            #expect(state.withLockedValue { $0 } == .unknown)
        }
        #endif
    }

    @Test func aWorkerThatMayNotReadItsStateReportsItUnknown() {
        let state = LockedBox<Worker.SchedulerState?>(nil)
        let done = Gate()
        WorkerPool.shared.submit {
            state.withLockedValue { $0 = Worker(readsSchedulerState: false).schedulerState }
            done.open()
        }
        #expect(done.wait())
        #expect(state.withLockedValue { $0 } == .unknown)
    }

    @Test(.oneExitTestAtATime) func theEnvironmentVariableMakesStatesUnavailable() async {
        await #expect(processExitsWith: .success) {
            setenv("OPERATIONS_SCHEDULER_STATE", "unavailable", 1)
            guard !SchedulerStateReader.isAllowed, SchedulerStateReader.forCurrentThread().currentState() == .unknown else {
                exitFailing("OPERATIONS_SCHEDULER_STATE=unavailable did not make the states unavailable")
            }
            guard !WorkerPool.shared.readsSchedulerState else { exitFailing("the shared pool still reads states") }
        }
    }

    @Test func theProcessCPUTimeIsRead() {
        let before = WorkerPool.processCPUTime()
        let end = DispatchTime.now().uptimeNanoseconds + 20_000_000
        var spin = 0
        while DispatchTime.now().uptimeNanoseconds < end { spin &+= 1 }
        let after = WorkerPool.processCPUTime()
        #expect(before != nil && after != nil)
        #expect((after ?? 0) > (before ?? 0))
    }

    // MARK: Pools

    private static func spin(microseconds: UInt64) {
        let end = DispatchTime.now().uptimeNanoseconds + microseconds * 1_000
        var spin = 0
        while DispatchTime.now().uptimeNanoseconds < end { spin &+= 1 }
    }

    @Test(arguments: [true, false])
    func cpuBoundWorkDoesNotGrowThePoolToItsLimit(readsSchedulerState: Bool) {
        // Far more CPU-bound jobs than cores: the pool must stay near the core count, whether it
        // reads the threads' states or decides from progress. No more cores than the process has
        // (one, when CI confines the suite to one CPU): a pool told of a core it cannot use sees
        // that core idle, and grows while the real one is busy.
        let pool = WorkerPool(coreCount: min(2, WorkerPool.detectCoreCount()), maximumThreadCount: 256, readsSchedulerState: readsSchedulerState)
        let done = DispatchSemaphore(value: 0)
        let jobs = 2_000
        for _ in 0..<jobs {
            pool.submit {
                WorkerPoolTests.spin(microseconds: 200)
                done.signal()
            }
        }
        for _ in 0..<jobs { done.wait() }
        // A few threads may be added while the machine is shared with other tests; a pool that
        // mistook busy threads for blocked ones would reach its limit.
        #expect(pool.statistics.threads < 16)
    }

    @Test(arguments: [true, false])
    func submittedJobsRunEvenWhenEveryWorkerBlocks(readsSchedulerState: Bool) {
        // Eight jobs that block until all have arrived, on two cores: up to four threads per core
        // the pool grows without asking for an idle core, which a loaded machine (the whole suite
        // at once) may not leave for minutes. Beyond that, growth is `withUnknownStates…`'s test.
        let pool = WorkerPool(coreCount: 2, maximumThreadCount: 32, readsSchedulerState: readsSchedulerState)
        let count = 8
        let arrived = LockedBox(0)
        let allArrived = Gate()
        let done = Gate()
        for _ in 0..<count {
            pool.submit {
                if arrived.withLockedValue({ $0 += 1; return $0 }) == count {
                    for _ in 0..<count { allArrived.open() }
                }
                allArrived.wait()
                done.open()
            }
        }
        for _ in 0..<count { #expect(done.wait()) }
    }

    @Test func withUnknownStatesEveryBlockedJobGetsAThread() {
        // Jobs that block make no progress: the pool adds a thread per look until each has one.
        // Two cores: up to 4 threads per core it grows without asking for an idle core, which a
        // loaded machine (the whole suite under a sanitizer) may never leave.
        let pool = WorkerPool(coreCount: 2, maximumThreadCount: 64, readsSchedulerState: false)
        let release = Gate()
        let started = Atomic(0)
        for _ in 0..<8 {
            pool.submit {
                started.add(1, ordering: .relaxed)
                release.wait()
            }
        }
        #expect(eventually(seconds: 10) { started.load(ordering: .relaxed) == 8 })
        #expect(pool.statistics.threads >= 8)
        for _ in 0..<8 { release.open() }
    }

    // MARK: Exhaustion

    @Test func anExhaustedPoolIsReportedOnceNamingTheOperationsHoldingIt() {
        let reports = EventLog<OpDiagnostics.Diagnostic>()
        let pool = WorkerPool(coreCount: 1, maximumThreadCount: 2, exhaustionReportDelay: .milliseconds(100),
                              describeHolders: { ["BlockOp \"stuck\""] }, report: { reports.append($0) })
        let release = Gate()
        for _ in 0..<4 {
            pool.submit { release.wait() }
        }
        #expect(eventually { reports.count == 1 })
        blockThread(milliseconds: 300)
        #expect(reports.count == 1, "reported more than once: \(reports.all)")
        for _ in 0..<4 { release.open() }
        guard case .workerPoolExhausted(let threads, let operations) = reports.all.first else {
            Issue.record("no exhaustion report: \(reports.all)")
            return
        }
        #expect(threads == 2 && operations == ["BlockOp \"stuck\""])
        #expect(reports.all.first?.description.contains("all 2 threads of the worker pool") == true)
        #expect(reports.all.first?.description.contains("OPERATIONS_MAX_THREADS") == true)
    }

    @Test func aPoolBelowItsLimitIsNotReportedExhausted() {
        let reports = EventLog<OpDiagnostics.Diagnostic>()
        let pool = WorkerPool(coreCount: 1, maximumThreadCount: 64, exhaustionReportDelay: .milliseconds(50),
                              describeHolders: { [] }, report: { reports.append($0) })
        let release = Gate()
        for _ in 0..<3 { pool.submit { release.wait() } }
        blockThread(milliseconds: 300)
        for _ in 0..<3 { release.open() }
        #expect(reports.all.isEmpty)
    }

    @Test(.oneExitTestAtATime) func theSharedPoolNamesTheOperationsHoldingItsThreads() async {
        await #expect(processExitsWith: .success) {
            setenv("OPERATIONS_MAX_THREADS", "2", 1)
            let reports = EventLog<String>()
            OpDiagnostics.handler = { reports.append("\($0)") }
            let release = Gate()
            let queue = OpQueue()
            for index in 0..<4 {
                let op = BlockOp { release.wait(seconds: 20) }
                op.name = "holder\(index)"
                queue.addOperation(op)
            }
            guard eventually(seconds: 10, { reports.count > 0 }) else { exitFailing("no report") }
            for _ in 0..<4 { release.open() }
            let report = reports.all.first ?? ""
            guard report.contains("all 2 threads"), report.contains("BlockOp \"holder0\""),
                  report.contains("BlockOp \"holder1\"") else { exitFailing("the report does not name the holders: \(report)") }
        }
    }
}
