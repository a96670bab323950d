@testable import Operations

// The control features a composition scenario mixes in (see ``CompositionScenario``): `RetryOp`s
// whose attempts fail a planned number of times, `timeout`s, `DelayOp`s, and `inject(from:)` /
// `map` from `ResultOp` and `AsyncBlockOp` producers. Like the rest of the plan, a pure function
// of the seed; ``CompositionRun`` runs them and ``CompositionHarness`` checks them.

extension CompositionScenario {
    /// A `RetryOp`: how many attempts it may make, how many fail and how, its backoff.
    struct RetryPlan: Sendable {
        /// How an attempt is implemented.
        enum AttemptKind: Sendable, Equatable {
            /// A `ResultOp<Int>`: fails by throwing, or by `cancel(with:)` on itself.
            case sync
            /// An `AsyncBlockOp<Int>`: fails by throwing, or by `cancel(with:)` on itself.
            case async
            /// An `AsyncBlockOp<Int>` with a short `timeout` that waits until it is cancelled
            /// (failing attempts only): it fails with its `OpTimeoutError`.
            case timesOut(microseconds: Int)
        }

        /// The `Backoff`, in microseconds (all at most 5 ms).
        enum BackoffPlan: Sendable {
            case none
            case constant(Int)
            case exponential(initial: Int, multiplier: Double, maximum: Int, jitter: Bool)
        }

        var maxAttempts: Int
        /// Attempts `1...failures` fail; the next one succeeds.
        var failures: Int
        /// Per attempt number (index 0 is attempt 1).
        var kinds: [AttemptKind]
        /// Per attempt number: a failing attempt cancels itself with an error instead of throwing.
        var cancelsItself: [Bool]
        var backoff: BackoffPlan
        /// `shouldRetry` says no after this attempt failed.
        var stopAfter: Int?
        /// The body of this attempt cancels the `RetryOp` (its group) before it returns.
        var cancelsRetryDuring: Int?

        /// The most attempts it makes when nothing cancels it.
        var limit: Int { min(maxAttempts, stopAfter ?? maxAttempts) }
        /// How many attempts it makes when nothing cancels it.
        var expectedAttempts: Int { min(failures + 1, limit) }
        /// Whether an attempt succeeds when nothing cancels it.
        var succeeds: Bool { failures < limit }

        func fails(_ attempt: Int) -> Bool { attempt <= failures }

        var backoffValue: Backoff {
            switch backoff {
            case .none: .none
            case .constant(let microseconds): .constant(.microseconds(microseconds))
            case .exponential(let initial, let multiplier, let maximum, let jitter):
                .exponential(initial: .microseconds(initial), multiplier: multiplier, maximum: .microseconds(maximum), jitter: jitter)
            }
        }

        /// The least time the `RetryOp` must wait after attempt `attempt` failed before it makes
        /// the next (half the un-jittered wait with jitter).
        func minimumWait(afterAttempt attempt: Int) -> Duration {
            switch backoff {
            case .none, .constant:
                return backoffValue.delay(afterAttempt: attempt) ?? .zero
            case .exponential(let initial, let multiplier, let maximum, let jitter):
                let plain = Backoff.exponential(initial: .microseconds(initial), multiplier: multiplier,
                                                maximum: .microseconds(maximum), jitter: false)
                let wait = plain.delay(afterAttempt: attempt) ?? .zero
                return jitter ? wait / 2 : wait
            }
        }

        static func random(using rng: inout SplitMix64) -> RetryPlan {
            let maxAttempts = Int.random(in: 1...4, using: &rng)
            // Mostly a success after a few failures; sometimes every attempt fails.
            let failures = rng.chance(0.25) ? maxAttempts : Int.random(in: 0..<maxAttempts, using: &rng)
            var kinds: [AttemptKind] = []
            var cancelsItself: [Bool] = []
            for attempt in 1...maxAttempts {
                let fails = attempt <= failures
                let roll = Double.random(in: 0..<1, using: &rng)
                if fails && roll < 0.2 {
                    kinds.append(.timesOut(microseconds: Int.random(in: 300...2_000, using: &rng)))
                } else {
                    kinds.append(roll < 0.6 ? .sync : .async)
                }
                cancelsItself.append(rng.chance(0.3))
            }
            let backoff: BackoffPlan = switch Int.random(in: 0..<3, using: &rng) {
            case 0: .none
            case 1: .constant(Int.random(in: 0...3_000, using: &rng))
            default: .exponential(initial: Int.random(in: 200...1_500, using: &rng),
                                  multiplier: rng.pick([1.0, 1.5, 2.0, 3.0]),
                                  maximum: Int.random(in: 1_000...5_000, using: &rng),
                                  jitter: rng.chance(0.4))
            }
            return RetryPlan(
                maxAttempts: maxAttempts, failures: failures, kinds: kinds, cancelsItself: cancelsItself,
                backoff: backoff,
                stopAfter: maxAttempts > 1 && rng.chance(0.15) ? Int.random(in: 1..<maxAttempts, using: &rng) : nil,
                cancelsRetryDuring: rng.chance(0.08) ? Int.random(in: 1...maxAttempts, using: &rng) : nil)
        }
    }

    /// An `inject(from:)` of a consumer.
    struct Injection: Sendable {
        /// The producer (a `.producer` or `.mapped` node among the consumer's dependencies).
        var producer: Int
        /// The injection's closure throws (the consumer is cancelled with that error).
        var throwing: Bool
    }

    /// A cancellation that a timer makes some time after the operation started executing.
    struct TimedCancel: Sendable {
        var microseconds: Int
        var withError: Bool
    }

    /// The value a producer's body returns: its id mixed with the values injected into it, or
    /// the value of the producer it maps.
    func expectedValue(of id: Int) -> Int {
        let node = nodes[id]
        switch node.kind {
        case .mapped(let async):
            return expectedValue(of: node.mapSource!) &+ (async ? 2 : 1)
        default:
            return node.injections.reduce(id &* 1_000_003) { $0 &* 31 &+ expectedValue(of: $1.producer) }
        }
    }
}

extension CompositionScenario.Node {
    /// A `ResultOp<Int>` or `AsyncBlockOp<Int>` (made directly or by `map`).
    var isProducer: Bool {
        switch kind {
        case .producer, .mapped: true
        default: false
        }
    }

    /// Its body may make children at run time.
    var canSpawn: Bool {
        switch kind {
        case .block, .sync, .asyncBody, .asyncCallback, .producer, .mapped: true
        case .group, .permission, .retry, .delay: false
        }
    }

    var isRetry: Bool { kind == .retry }
    var isDelay: Bool { kind == .delay }

    /// The harness gives it an observer of its own (slot 0) to see it start and finish: a group,
    /// and the operations of library classes it cannot subclass and whose start it must see.
    var hasOwnObserver: Bool {
        switch kind {
        case .group, .retry, .delay, .mapped: true
        case .block, .sync, .asyncBody, .asyncCallback, .producer, .permission: false
        }
    }

    /// A subclass of the harness that records every `cancel()` call (the others are final library
    /// classes, or plain `BlockOp`s).
    var recordsCancels: Bool {
        switch kind {
        case .block(let plain, _): !plain
        case .sync, .asyncBody, .asyncCallback, .group: true
        case .producer, .mapped, .retry, .delay, .permission: false
        }
    }

    /// Its timeout, if it has one.
    var timeout: Duration? {
        timeoutMicroseconds.map { .microseconds($0) }
    }

    /// The length of a delay's wait.
    var delay: Duration {
        .microseconds(delayMicroseconds)
    }
}
