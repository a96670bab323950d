import Testing
@testable import Operations

/// Whether `delay` is within a microsecond of `expected` (an exponential wait is computed with a
/// `Double` factor, so it may be off by a few attoseconds).
private func backoffDelay(_ delay: Duration?, isAbout expected: Duration) -> Bool {
    guard let delay else { return false }
    let difference = delay > expected ? delay - expected : expected - delay
    return difference < .microseconds(1)
}

/// `Backoff` computes the wait after each failed attempt: none, constant, exponential (capped,
/// optionally jittered) or custom, never negative. Pure computation: no operations, no threads.
@Suite struct BackoffTests {

    // MARK: None and constant

    @Test func noneWaitsZeroAfterEveryAttempt() {
        let backoff = Backoff.none
        for attempt in [1, 2, 3, 10, 1_000] {
            #expect(backoff.delay(afterAttempt: attempt) == .zero, "after attempt \(attempt)")
        }
    }

    @Test func constantWaitsTheSameAfterEveryAttempt() {
        let backoff = Backoff.constant(.milliseconds(250))
        for attempt in [1, 2, 3, 10, 1_000] {
            #expect(backoff.delay(afterAttempt: attempt) == .milliseconds(250), "after attempt \(attempt)")
        }
    }

    // MARK: Exponential

    @Test func exponentialMultipliesTheInitialWaitAfterEachAttempt() {
        let backoff = Backoff.exponential(initial: .milliseconds(100), multiplier: 3, maximum: .seconds(10))
        let expected: [Duration] = [.milliseconds(100), .milliseconds(300), .milliseconds(900), .milliseconds(2_700), .milliseconds(8_100)]
        for (index, wait) in expected.enumerated() {
            let delay = backoff.delay(afterAttempt: index + 1)
            #expect(backoffDelay(delay, isAbout: wait), "after attempt \(index + 1): \(String(describing: delay)), expected \(wait)")
        }
    }

    @Test func exponentialIsCappedAtItsMaximum() {
        let backoff = Backoff.exponential(initial: .milliseconds(100), multiplier: 2, maximum: .milliseconds(500))
        #expect(backoffDelay(backoff.delay(afterAttempt: 3), isAbout: .milliseconds(400)))
        // 800 ms and beyond are capped.
        for attempt in 4...12 {
            #expect(backoff.delay(afterAttempt: attempt) == .milliseconds(500), "after attempt \(attempt)")
        }
    }

    @Test func exponentialDefaultsToDoublingUpToAMinute() {
        let backoff = Backoff.exponential(initial: .seconds(1))
        #expect(backoffDelay(backoff.delay(afterAttempt: 1), isAbout: .seconds(1)))
        #expect(backoffDelay(backoff.delay(afterAttempt: 2), isAbout: .seconds(2)))
        #expect(backoffDelay(backoff.delay(afterAttempt: 6), isAbout: .seconds(32)))
        #expect(backoff.delay(afterAttempt: 7) == .seconds(60))   // 64 s, capped
    }

    @Test func exponentialAfterAHugeAttemptNumberStaysAtTheMaximum() {
        // The uncapped wait overflows a Duration (and then a Double): it must not trap.
        let backoff = Backoff.exponential(initial: .milliseconds(100), multiplier: 2, maximum: .seconds(30))
        for attempt in [64, 100, 1_100, 10_000, Int.max / 2, Int.max] {
            #expect(backoff.delay(afterAttempt: attempt) == .seconds(30), "after attempt \(attempt)")
        }
        let steep = Backoff.exponential(initial: .seconds(1), multiplier: 1e300, maximum: .seconds(5))
        #expect(steep.delay(afterAttempt: 2) == .seconds(5))
        #expect(steep.delay(afterAttempt: 3) == .seconds(5))
    }

    @Test func exponentialWithJitterWaitsBetweenHalfAndAllOfTheWait() {
        let backoff = Backoff.exponential(initial: .milliseconds(100), multiplier: 2, maximum: .seconds(1), jitter: true)
        // After attempts 1...4 the full wait is 100, 200, 400, 800 ms; after 5 and 20 it is capped.
        let fullWaits: [(attempt: Int, full: Duration)] = [
            (1, .milliseconds(100)), (2, .milliseconds(200)), (3, .milliseconds(400)),
            (4, .milliseconds(800)), (5, .seconds(1)), (20, .seconds(1)),
        ]
        let slack = Duration.microseconds(1)
        for (attempt, full) in fullWaits {
            var seen = Set<Duration>()
            var outside: [Duration] = []
            for _ in 0..<500 {
                guard let delay = backoff.delay(afterAttempt: attempt) else {
                    Issue.record("jittered exponential backoff said to stop after attempt \(attempt)")
                    return
                }
                if delay < full / 2 - slack || delay > full + slack {
                    outside.append(delay)
                }
                seen.insert(delay)
            }
            #expect(outside.isEmpty,
                    "after attempt \(attempt), \(outside.count) of 500 waits outside [\(full / 2), \(full)], e.g. \(outside.prefix(3))")
            // 500 draws from a continuous range: a constant would give one value.
            #expect(seen.count > 10, "after attempt \(attempt), only \(seen.count) distinct waits in 500 draws")
        }
    }

    // MARK: Custom

    @Test func customIsGivenTheAttemptNumber() {
        let asked = EventLog<Int>()
        let backoff = Backoff.custom { attempt in
            asked.append(attempt)
            return .milliseconds(attempt * 10)
        }
        #expect(backoff.delay(afterAttempt: 1) == .milliseconds(10))
        #expect(backoff.delay(afterAttempt: 2) == .milliseconds(20))
        #expect(backoff.delay(afterAttempt: 7) == .milliseconds(70))
        #expect(asked.all == [1, 2, 7])
    }

    @Test func customReturningNilSaysToStop() {
        let backoff = Backoff.custom { attempt in attempt < 3 ? .milliseconds(5) : nil }
        #expect(backoff.delay(afterAttempt: 1) == .milliseconds(5))
        #expect(backoff.delay(afterAttempt: 2) == .milliseconds(5))
        #expect(backoff.delay(afterAttempt: 3) == nil)
        #expect(backoff.delay(afterAttempt: 4) == nil)
    }

    // MARK: Negative durations

    @Test func negativeDurationsAreClampedToZero() {
        #expect(Backoff.constant(.milliseconds(-5)).delay(afterAttempt: 1) == .zero)
        #expect(Backoff.custom { _ in .seconds(-1) }.delay(afterAttempt: 1) == .zero)
        let negativeStart = Backoff.exponential(initial: .milliseconds(-100), multiplier: 2, maximum: .seconds(1))
        for attempt in 1...4 {
            #expect(negativeStart.delay(afterAttempt: attempt) == .zero, "after attempt \(attempt)")
        }
        let negativeMaximum = Backoff.exponential(initial: .milliseconds(100), multiplier: 2, maximum: .seconds(-1))
        #expect(negativeMaximum.delay(afterAttempt: 1) == .zero)
        #expect(negativeMaximum.delay(afterAttempt: 10) == .zero)
        let jittered = Backoff.exponential(initial: .milliseconds(-100), multiplier: 2, maximum: .seconds(1), jitter: true)
        #expect(jittered.delay(afterAttempt: 2) == .zero)
    }

    @Test func exponentialWithANegativeInitialWaitDoesNotTrap() {
        let backoff = Backoff.exponential(initial: .seconds(-1), multiplier: 10, maximum: .seconds(5))
        for attempt in [1, 2, 40, 1_000] {
            #expect(backoff.delay(afterAttempt: attempt) == .zero)
        }
    }
}
