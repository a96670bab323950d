import Dispatch
@testable import Operations
import Synchronization
import Testing

@Suite("Worker pool: quality of service")
struct WorkerPoolQualityOfServiceTests {
    @Test func waitingJobsOfAHigherClassRunFirstAndEachClassInOrder() {
        // One thread, never more: the jobs wait behind the first, and then run one at a time.
        let pool = WorkerPool(coreCount: 1, maximumThreadCount: 1, readsSchedulerState: false)
        let gate = Gate()
        let holding = Gate()
        pool.submit {
            holding.open()
            _ = gate.wait()
        }
        #expect(holding.wait())
        let order = EventLog<String>()
        let done = Gate()
        for index in 0..<20 {
            pool.submit(qualityOfService: .background) { order.append("background \(index)") }
        }
        pool.submit(qualityOfService: .utility) { order.append("utility") }
        pool.submit { order.append("default") }
        pool.submit(qualityOfService: .unspecified) { order.append("unspecified") }
        pool.submit(qualityOfService: .userInitiated) { order.append("userInitiated") }
        pool.submit(qualityOfService: .userInteractive) { order.append("userInteractive") }
        pool.submit(qualityOfService: .background) { done.open() }
        gate.open()
        #expect(done.wait())
        #expect(Array(order.all.prefix(5)) == ["userInteractive", "userInitiated", "default", "unspecified", "utility"])
        #expect(Array(order.all.dropFirst(5)) == (0..<20).map { "background \($0)" })
    }

    @Test func aJobOfAHigherClassThanEveryRunningOneGetsAThreadAtOnce() {
        // One core, kept busy (not blocked: the monitor would add a thread for a blocked one).
        let pool = WorkerPool(coreCount: 1, maximumThreadCount: 4)
        let urgentRan = Gate()
        let stop = Atomic<Bool>(false)
        let spinning = Gate()
        pool.submit(qualityOfService: .background) {
            spinning.open()
            let end = ContinuousClock.now + .seconds(30)
            while !stop.load(ordering: .relaxed), ContinuousClock.now < end {}
        }
        #expect(spinning.wait())
        pool.submit(qualityOfService: .userInitiated) { urgentRan.open() }
        // It runs while the background job still spins.
        #expect(urgentRan.wait(seconds: 10))
        stop.store(true, ordering: .relaxed)
        #expect(pool.statistics.threads >= 2)
    }

    @Test func theJobQueueServesTheHighestClassFirst() {
        var jobs = WorkerPool.JobQueue()
        #expect(jobs.isEmpty && jobs.popFirst() == nil)
        jobs.append({}, qualityOfService: .background)
        jobs.append({}, qualityOfService: .userInitiated)
        jobs.append({}, qualityOfService: .background)
        #expect(jobs.count == 3)
        #expect(jobs.popFirst()?.qualityOfService == .userInitiated)
        jobs.append({}, qualityOfService: .utility)
        #expect(jobs.popFirst()?.qualityOfService == .utility)
        #expect(jobs.popFirst()?.qualityOfService == .background)
        #expect(jobs.popFirst()?.qualityOfService == .background)
        #expect(jobs.isEmpty && jobs.popFirst() == nil)
    }
}
