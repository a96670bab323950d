/// How long a ``RetryOp`` waits before the next attempt.
///
/// ```swift
/// RetryOp(maxAttempts: 5, backoff: .exponential(initial: .milliseconds(200), multiplier: 2,
///                                               maximum: .seconds(5), jitter: true)) { _ in
///     AsyncOp { try await client.upload(file) }
/// }
/// ```
public enum Backoff: Sendable {
    /// The next attempt starts at once.
    case none
    /// The same wait before every retry.
    case constant(Duration)
    /// A wait of `initial` before the second attempt, multiplied by `multiplier` before each
    /// attempt after that, never more than `maximum`. With `jitter`, each wait is picked at random
    /// between half of that and all of it, so that clients that failed together do not retry
    /// together.
    case exponential(initial: Duration, multiplier: Double = 2, maximum: Duration = .seconds(60), jitter: Bool = false)
    /// The wait after attempt `attempt` (numbered from 1) failed, or `nil` to stop retrying.
    case custom(@Sendable (_ attempt: Int) -> Duration?)

    /// The wait after attempt `attempt` (numbered from 1) failed, before attempt `attempt + 1`;
    /// `nil` when the backoff says to stop.
    public func delay(afterAttempt attempt: Int) -> Duration? {
        switch self {
        case .none:
            return .zero
        case .constant(let duration):
            return max(duration, .zero)
        case .exponential(let initial, let multiplier, let maximum, let jitter):
            guard initial > .zero else { return .zero }
            let growth = power(max(multiplier, 0), max(attempt - 1, 0))
            let uncapped = initial.seconds * growth
            // Compared in seconds first: multiplying a Duration that would overflow traps.
            var wait = uncapped.isFinite && uncapped < maximum.seconds ? initial * growth : maximum
            wait = max(wait, .zero)
            if jitter {
                wait = wait * Double.random(in: 0.5...1)
            }
            return wait
        case .custom(let delay):
            return delay(attempt).map { max($0, .zero) }
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// `base` raised to `exponent`, without Foundation.
private func power(_ base: Double, _ exponent: Int) -> Double {
    var result = 1.0
    var remaining = exponent
    var factor = base
    while remaining > 0 {
        if remaining & 1 == 1 { result *= factor }
        factor *= factor
        remaining >>= 1
    }
    return result
}
