import Dispatch
@testable import Operations
import Synchronization
import Testing

/// Timers fire on time while the worker pool is saturated with CPU-bound work of a high class:
/// their handlers are the library's own short jobs, which do not wait behind user work.
@Suite struct TimersUnderLoadTests {
    @Test func aTimeoutAndADelayFireOnTimeWhileThePoolIsSaturatedWithUserInitiatedWork() async {
        let queue = OpQueue()
        queue.qualityOfService = .userInitiated
        let started = Gate()
        let times = LockedBox<(started: ContinuousClock.Instant?, cancelled: ContinuousClock.Instant?)>((nil, nil))
        let timed = AsyncOp { try await Task.sleep(for: .seconds(30)) }
        timed.name = "timed-under-load"
        timed.qualityOfService = .userInitiated
        timed.addObserver(BlockObserver(
            willExecute: { _ in
                times.withLockedValue { $0.started = .now }
                started.open()
            },
            didCancel: { _, _ in times.withLockedValue { $0.cancelled = .now } }
        ))
        timed.timeout = .milliseconds(100)
        let delay = DelayOp(for: .milliseconds(100))
        delay.qualityOfService = .userInitiated
        // Heard on the threads that start and end the delay (a completion block would run as a
        // job of its own, behind the spinning ones).
        let delayTimes = EventLog<ContinuousClock.Instant>()
        delay.addObserver(BlockObserver(
            willExecute: { _ in
                delayTimes.append(.now)
                started.open()
            },
            didFinish: { _, _ in delayTimes.append(.now) }
        ))
        await queue.addOperations([timed, delay], waitUntilFinished: false)
        // Both timers are armed before the pool is saturated.
        #expect(await started.waitOffThread())
        #expect(await started.waitOffThread())

        // Every worker spins, and more spinning jobs of the same class wait.
        let stop = Atomic<Bool>(false)
        let spinners = WorkerPool.shared.statistics.threads + 4
        for _ in 0..<spinners {
            WorkerPool.shared.submit(qualityOfService: .userInitiated) {
                let end = ContinuousClock.now + .seconds(5)
                while !stop.load(ordering: .relaxed), ContinuousClock.now < end {}
            }
        }
        await timed.waitUntilFinished()
        await delay.waitUntilFinished()
        stop.store(true, ordering: .relaxed)

        let (timedStart, timedCancel) = times.withLockedValue { $0 }
        let lateness = timedCancel.flatMap { cancelled in timedStart.map { cancelled - $0 } }
        #expect(timed.error is OpTimeoutError)
        #expect(lateness.map { $0 < .seconds(1) } == true, "the timeout fired after \(String(describing: lateness))")
        let delayed = delayTimes.all
        let delayTook = delayed.count == 2 ? delayed[1] - delayed[0] : nil
        #expect(delayTook.map { $0 < .seconds(1) } == true, "the delay ended after \(String(describing: delayTook))")
    }
}
