import Testing
@testable import Operations

@Suite struct WorkerPoolTests {
    @Test func noThreadsAreAddedWhileEveryCoreIsBusy() {
        #expect(WorkerPool.threadsToAdd(running: 2, threads: 2, pending: 10, cores: 2, limit: 256) == 0)
    }

    @Test func noThreadsAreAddedWithoutWaitingJobs() {
        #expect(WorkerPool.threadsToAdd(running: 0, threads: 8, pending: 0, cores: 2, limit: 256) == 0)
    }

    @Test func blockedWorkersAreMatchedSoThePoolDoubles() {
        #expect(WorkerPool.threadsToAdd(running: 0, threads: 8, pending: 1, cores: 2, limit: 256) == 8)
        #expect(WorkerPool.threadsToAdd(running: 1, threads: 2, pending: 1, cores: 2, limit: 256) == 1)
    }

    @Test func growthIsBoundedPerIntervalAndByTheLimit() {
        #expect(WorkerPool.threadsToAdd(running: 0, threads: 200, pending: 1, cores: 2, limit: 1000) == WorkerPool.maximumGrowthPerInterval)
        #expect(WorkerPool.threadsToAdd(running: 0, threads: 250, pending: 1, cores: 2, limit: 256) == 6)
        #expect(WorkerPool.threadsToAdd(running: 0, threads: 256, pending: 9, cores: 2, limit: 256) == 0)
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
