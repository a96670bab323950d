import Dispatch
@testable import Operations
import Synchronization
import Testing

/// The pool's lanes by quality of service serve the highest class first, but no class starves:
/// a lane passed over ``WorkerPool/JobQueue/starvationLimit`` times is served next. The library's
/// own short jobs (timer handlers) have a lane above every class.
@Suite("Worker pool: aging of the quality-of-service lanes")
struct JobQueueAgingTests {
    @Test func aLowLaneIsServedUnderAConstantLoadOfAHigherOne() {
        var jobs = WorkerPool.JobQueue()
        jobs.append({}, qualityOfService: .background)
        jobs.append({}, qualityOfService: .utility)
        var servedAt: [DispatchQoS.QoSClass: Int] = [:]
        for pop in 1...1_000 {
            // Always one more user-interactive job than can be served.
            jobs.append({}, qualityOfService: .userInteractive)
            jobs.append({}, qualityOfService: .userInteractive)
            let popped = jobs.popFirst()!
            if popped.qualityOfService != .userInteractive {
                servedAt[popped.qualityOfService] = pop
            }
        }
        let bound = WorkerPool.JobQueue.starvationLimit + WorkerPool.JobQueue.laneCount
        #expect(servedAt[.utility].map { $0 <= bound } == true, "utility served at \(String(describing: servedAt[.utility]))")
        #expect(servedAt[.background].map { $0 <= 2 * bound } == true, "background served at \(String(describing: servedAt[.background]))")
    }

    @Test func everyJobOfAStarvedLaneIsServedInOrder() {
        var jobs = WorkerPool.JobQueue()
        let served = EventLog<Int>()
        let low = 10
        for index in 0..<low {
            jobs.append({ served.append(index) }, qualityOfService: .utility)
        }
        for _ in 0..<(low * (WorkerPool.JobQueue.starvationLimit + WorkerPool.JobQueue.laneCount)) {
            jobs.append({}, qualityOfService: .userInitiated)
            jobs.popFirst()!.job()
        }
        #expect(served.all == Array(0..<low))
    }

    @Test func withoutContentionTheHighestClassGoesFirst() {
        var jobs = WorkerPool.JobQueue()
        for _ in 0..<5 { jobs.append({}, qualityOfService: .background) }
        jobs.append({}, qualityOfService: .utility)
        jobs.append({}, qualityOfService: .userInitiated)
        jobs.appendLibraryWork({}, qualityOfService: .background)
        #expect(jobs.count == 8)
        let first = jobs.popFirst()
        #expect(first?.rank == 0 && first?.qualityOfService == .background)   // the library's lane
        #expect(jobs.popFirst()?.qualityOfService == .userInitiated)
        #expect(jobs.popFirst()?.qualityOfService == .utility)
        for _ in 0..<5 { #expect(jobs.popFirst()?.qualityOfService == .background) }
        #expect(jobs.isEmpty && jobs.popFirst() == nil)
    }

    @Test func aBackgroundJobRunsUnderAConstantLoadOfUserInteractiveJobs() {
        // One thread: the user-interactive jobs keep resubmitting themselves, so that one always
        // waits; the background job runs anyway, while the load goes on.
        let pool = WorkerPool(coreCount: 1, maximumThreadCount: 1, readsSchedulerState: false)
        let stop = Atomic<Bool>(false)
        let ran = Gate()
        @Sendable func load() {
            guard !stop.load(ordering: .relaxed) else { return }
            blockThread(milliseconds: 1)
            pool.submit(qualityOfService: .userInteractive, load)
        }
        pool.submit(qualityOfService: .userInteractive, load)
        pool.submit(qualityOfService: .userInteractive, load)
        pool.submit(qualityOfService: .background) { ran.open() }
        #expect(ran.wait(seconds: 10))
        stop.store(true, ordering: .relaxed)
    }

    @Test func libraryWorkGetsAThreadAtOnceWhileEveryWorkerIsBusy() {
        // One core, kept busy with CPU work of the highest class, and more of it waiting.
        let pool = WorkerPool(coreCount: 1, maximumThreadCount: 4)
        let ran = Gate()
        let stop = Atomic<Bool>(false)
        let spinning = Gate()
        for _ in 0..<3 {
            pool.submit(qualityOfService: .userInteractive) {
                spinning.open()
                let end = ContinuousClock.now + .seconds(30)
                while !stop.load(ordering: .relaxed), ContinuousClock.now < end {}
            }
        }
        #expect(spinning.wait())
        pool.submitLibraryWork(qualityOfService: .background) { ran.open() }
        #expect(ran.wait(seconds: 10))
        stop.store(true, ordering: .relaxed)
    }
}
