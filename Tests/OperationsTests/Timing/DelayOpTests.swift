import Testing
import Dispatch
@testable import Operations

/// `DelayOp`: an operation that only waits, for a duration from its start or until an instant,
/// holding no thread, and that finishes at once (with no error) when it is cancelled.
@Suite struct DelayOpTests {
    // MARK: Waiting

    @Test func delayForADurationFinishesNoEarlierThanTheDurationAfterItStarts() async {
        let delay = DelayOp(for: .milliseconds(200))
        let times = Self.recordTimes(of: delay)
        let queue = OpQueue()
        queue.addOperation(delay)
        await delay.waitUntilFinished()

        let (started, finished) = (times.started, times.finished)
        #expect(started != nil)
        #expect(finished != nil)
        if let started, let finished {
            #expect(finished - started >= .milliseconds(200))
            #expect(finished - started < .seconds(10))
        }
        #expect(!delay.isCancelled)
        #expect(delay.error == nil)
    }

    @Test func delayUntilAFutureInstantFinishesNoEarlierThanThatInstant() async {
        let deadline = ContinuousClock.now + .milliseconds(200)
        let delay = DelayOp(until: deadline)
        let times = Self.recordTimes(of: delay)
        let queue = OpQueue()
        queue.addOperation(delay)
        await delay.waitUntilFinished()

        let finished = times.finished
        #expect(finished != nil)
        if let finished {
            #expect(finished >= deadline)
            #expect(finished - deadline < .seconds(10))
        }
        #expect(delay.error == nil)
    }

    @Test func delayUntilAPastInstantFinishesAtOnce() async {
        let delay = DelayOp(until: ContinuousClock.now - .seconds(1))
        delay.start()
        // Started by hand, it finished before `start()` returned: no timer was needed.
        #expect(delay.isFinished)
        #expect(!delay.isCancelled)
        #expect(delay.error == nil)

        let queued = DelayOp(until: ContinuousClock.now - .seconds(1))
        let queuedFinished = finishTimes(of: queued)
        let start = ContinuousClock.now
        OpQueue().addOperation(queued)
        await queued.waitUntilFinished()
        #expect((queuedFinished.all.first ?? .now) - start < .seconds(10))
        #expect(queued.error == nil)
    }

    @Test func delayAsADependencyDelaysItsDependent() async {
        let delay = DelayOp(for: .milliseconds(200))
        let delayTimes = Self.recordTimes(of: delay)
        let dependentStart = LockedBox<(ContinuousClock.Instant, Bool)?>(nil)
        let dependent = BlockOp {
            dependentStart.withLockedValue { $0 = (.now, delay.isFinished) }
        }
        dependent.addDependency(delay)
        let queue = OpQueue()
        await queue.addOperations([dependent, delay], waitUntilFinished: false)
        await dependent.waitUntilFinished()

        let recorded = dependentStart.withLockedValue { $0 }
        #expect(recorded?.1 == true)
        if let (ranAt, _) = recorded, let delayStarted = delayTimes.started {
            #expect(ranAt - delayStarted >= .milliseconds(200))
        } else {
            Issue.record("the dependent did not run, or the delay did not start")
        }
    }

    @Test func delaysInAWidthOneGroupSpaceTheWorkOut() async {
        let ranAt = EventLog<(Int, ContinuousClock.Instant)>()
        let gap = Duration.milliseconds(100)
        var children: [Op] = []
        for index in 0..<3 {
            if index > 0 { children.append(DelayOp(for: gap)) }
            children.append(BlockOp { ranAt.append((index, .now)) })
        }
        let group = GroupOp(operations: children)
        group.maxConcurrentOperationCount = 1
        let queue = OpQueue()
        queue.addOperation(group)
        await group.waitUntilFinished()

        let runs = ranAt.all
        #expect(runs.map(\.0) == [0, 1, 2])
        for (earlier, later) in zip(runs, runs.dropFirst()) {
            #expect(later.1 - earlier.1 >= gap, "work \(later.0) ran \(later.1 - earlier.1) after work \(earlier.0)")
        }
        #expect(group.error == nil)
    }

    // MARK: Cancellation

    @Test func delayCancelledWhileWaitingFinishesPromptlyWithoutError() async {
        let delay = DelayOp(for: .seconds(30))
        let finished = finishTimes(of: delay)
        let queue = OpQueue()
        queue.addOperation(delay)
        #expect(await eventuallyAsync { delay.isExecuting })
        let cancelled = ContinuousClock.now
        delay.cancel()
        await delay.waitUntilFinished()

        #expect((finished.all.first ?? .now) - cancelled < .seconds(10))
        #expect(delay.isFinished)
        #expect(delay.isCancelled)
        #expect(delay.error == nil)
    }

    @Test func delayCancelledBeforeItStartsFinishesWithoutWaiting() async {
        let delay = DelayOp(for: .seconds(30))
        delay.cancel()
        let finished = finishTimes(of: delay)
        let queue = OpQueue()
        let start = ContinuousClock.now
        queue.addOperation(delay)
        await delay.waitUntilFinished()
        #expect((finished.all.first ?? .now) - start < .seconds(10))
        #expect(delay.isCancelled)
        #expect(delay.error == nil)

        let byHand = DelayOp(until: ContinuousClock.now + .seconds(30))
        byHand.cancel()
        byHand.start()
        #expect(byHand.isFinished)
        #expect(byHand.error == nil)
    }

    // MARK: Many at once

    @Test func tenThousandDelaysWaitAtOnceWithoutHoldingThreads() async {
        #if OPERATIONS_INTERNAL_CHECKS
        // The checked build verifies a queue's invariants after every change, in time that grows
        // with the queue: 10,000 members would make this test (and its neighbours) crawl.
        let count = 1_000
        #else
        let count = 10_000
        #endif
        // Longer than any test run: none of them can finish by itself before all have started,
        // however slowly a loaded machine or a sanitizer starts them, so the test does not
        // depend on timing. They end by cancellation, which finishes a waiting delay at once.
        let wait = Duration.seconds(3_600)
        // A delay that held a worker thread could not run beside more than the pool's threads.
        #expect(WorkerPool.shared.maximumThreadCount < count)

        let census = DelayCensus(expecting: count)
        let delays = (0..<count).map { _ in
            let delay = DelayOp(for: wait)
            delay.addObserver(BlockObserver(
                willExecute: { _ in census.started() },
                willFinish: { _, _ in census.finished() }
            ))
            return delay
        }
        let queue = OpQueue()
        #expect(queue.maxConcurrentOperationCount == OpQueue.defaultMaxConcurrentOperationCount)
        await queue.addOperations(delays, waitUntilFinished: false)

        // Every one of them is waiting at the same time: all started, none finished.
        await census.allStarted()
        #expect(census.finishedCount == 0)
        #expect(delays.allSatisfy { $0.isExecuting && !$0.isFinished })

        queue.cancelAllOperations()
        await queue.waitUntilAllOperationsAreFinished()
        #expect(census.finishedCount == count)
        #expect(delays.allSatisfy { $0.isFinished && $0.isCancelled && $0.error == nil })
    }

    // MARK: Accessors

    @Test func descriptionAndAccessorsDescribeTheWait() {
        let forDuration = DelayOp(for: .seconds(2))
        #expect(forDuration.duration == .seconds(2))
        #expect(forDuration.deadline == nil)
        #expect(forDuration.description == "DelayOp for \(Duration.seconds(2))")

        let instant = ContinuousClock.now + .seconds(5)
        let untilInstant = DelayOp(until: instant)
        #expect(untilInstant.deadline == instant)
        #expect(untilInstant.duration == nil)
        #expect(untilInstant.description.hasPrefix("DelayOp until "))

        let named = DelayOp(for: .milliseconds(10))
        named.name = "pause"
        #expect(named.description == "DelayOp \"pause\"")
    }

    // MARK: Helpers

    /// Counts delays starting and finishing, and lets a test wait until all have started.
    private final class DelayCensus: Sendable {
        private struct Counts {
            var started = 0
            var finished = 0
            var waiter: CheckedContinuation<Void, Never>?
        }

        private let expected: Int
        private let counts = LockedBox(Counts())

        init(expecting expected: Int) {
            self.expected = expected
        }

        func started() {
            let waiter = counts.withLockedValue { counts -> CheckedContinuation<Void, Never>? in
                counts.started += 1
                guard counts.started == expected else { return nil }
                defer { counts.waiter = nil }
                return counts.waiter
            }
            waiter?.resume()
        }

        func finished() {
            counts.withLockedValue { $0.finished += 1 }
        }

        var finishedCount: Int { counts.withLockedValue { $0.finished } }

        /// Returns once every expected delay has started.
        func allStarted() async {
            await withCheckedContinuation { continuation in
                let allStarted = counts.withLockedValue { counts in
                    if counts.started == expected { return true }
                    counts.waiter = continuation
                    return false
                }
                if allStarted { continuation.resume() }
            }
        }
    }

    /// When an operation started executing and when it finished, as its observer heard them.
    private final class Times: Sendable {
        private let box = LockedBox<(started: ContinuousClock.Instant?, finished: ContinuousClock.Instant?)>((nil, nil))
        var started: ContinuousClock.Instant? { box.withLockedValue { $0.started } }
        var finished: ContinuousClock.Instant? { box.withLockedValue { $0.finished } }
        func noteStart() { box.withLockedValue { $0.started = .now } }
        func noteFinish() { box.withLockedValue { $0.finished = .now } }
    }

    private static func recordTimes(of operation: Op) -> Times {
        let times = Times()
        operation.addObserver(BlockObserver(
            willExecute: { _ in times.noteStart() },
            willFinish: { _, _ in times.noteFinish() }
        ))
        return times
    }

}
