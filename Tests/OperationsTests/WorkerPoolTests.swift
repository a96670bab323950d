import Testing
import Dispatch
@testable import Operations

@Suite struct WorkerPoolTests {
    private func add(runnable: Int = 0, blocked: Int = 0, unknown: Int = 0, threads: Int, starting: Int = 0,
                     pending: Int, cores: Int = 2, limit: Int = 256) -> Int {
        WorkerPool.threadsToAdd(
            load: .init(runnableWorkers: runnable, blockedWorkers: blocked, unknownWorkers: unknown),
            threads: threads, starting: starting, pending: pending, cores: cores, limit: limit)
    }

    @Test func noThreadsAreAddedWhileEveryCoreHasCPUWork() {
        #expect(add(runnable: 2, threads: 2, pending: 10) == 0)
        // Runnable workers that other processes keep off the CPU still have CPU work.
        #expect(add(runnable: 2, blocked: 40, threads: 42, pending: 10) == 0)
    }

    @Test func noThreadsAreAddedWithoutWaitingJobsOrWhileThreadsStart() {
        #expect(add(blocked: 8, threads: 8, pending: 0) == 0)
        #expect(add(blocked: 8, threads: 8, starting: 1, pending: 3) == 0)
    }

    @Test func blockedWorkersAreMatchedSoThePoolDoubles() {
        #expect(add(blocked: 8, threads: 8, pending: 1) == 8)
        #expect(add(blocked: 2, threads: 2, pending: 5) == 5)
    }

    @Test func anIdleCoreNextToBusyOnesGetsOneThread() {
        #expect(add(runnable: 1, blocked: 1, threads: 2, pending: 3) == 1)
        #expect(add(runnable: 1, blocked: 30, threads: 31, pending: 3, cores: 4) == 3)
    }

    @Test func unknownStatesCountAsBusyAndGrowOneAtATime() {
        #expect(add(unknown: 2, threads: 2, pending: 3) == 1)
        #expect(add(runnable: 1, unknown: 1, threads: 2, pending: 3) == 0)
    }

    @Test func growthIsBoundedPerIntervalAndByTheLimit() {
        #expect(add(blocked: 200, threads: 200, pending: 1, limit: 1000) == WorkerPool.maximumGrowthPerInterval)
        #expect(add(blocked: 250, threads: 250, pending: 1) == 6)
        #expect(add(blocked: 256, threads: 256, pending: 9) == 0)
    }

    @Test func aWorkerKnowsItsSchedulerState() {
        let state = LockedBox<Worker.SchedulerState?>(nil)
        let done = DispatchSemaphore(value: 0)
        WorkerPool.shared.submit {
            let worker = Worker()
            state.withLockedValue { $0 = worker.schedulerState }
            done.signal()
        }
        done.wait()
        #if os(Linux)
        #expect(state.withLockedValue { $0 } == .runnable)   // it reads its own state while running
        #endif
    }

    @Test func cpuBoundWorkDoesNotGrowThePoolToItsLimit() {
        // Far more CPU-bound operations than cores: the pool must stay near the core count.
        let pool = WorkerPool(coreCount: 2, maximumThreadCount: 256)
        let done = DispatchSemaphore(value: 0)
        let jobs = 400
        for _ in 0..<jobs {
            pool.submit {
                let end = DispatchTime.now().uptimeNanoseconds + 1_000_000
                var spin = 0
                while DispatchTime.now().uptimeNanoseconds < end { spin &+= 1 }
                done.signal()
            }
        }
        for _ in 0..<jobs { done.wait() }
        // A few threads may be added while the machine is shared with other tests; a pool that
        // mistook busy threads for blocked ones would reach its limit.
        #expect(pool.statistics.threads < 32)
    }

    @Test func submittedJobsRunEvenWhenEveryWorkerBlocks() {
        let pool = WorkerPool(coreCount: 1, maximumThreadCount: 16)
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
}
