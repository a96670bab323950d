#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The environment variables that steer the stress tests.
///
/// - `OPERATIONS_STRESS_SEED`: the seed to use (decimal, or hexadecimal with `0x`) instead of a
///   random one, to replay a failure. Every test prints the seed it uses.
/// - `OPERATIONS_SOAK_SECONDS`: enables the soak test and sets how long it runs.
enum StressEnvironment {
    /// The seed to use: `OPERATIONS_STRESS_SEED` if set, a fresh random one otherwise.
    /// It is printed, so that a failing run can be replayed.
    static func seed() -> UInt64 {
        let seed = chosenSeed()
        print("stress seed: \(seed)")
        return seed
    }

    private static func chosenSeed() -> UInt64 {
        if let text = value(of: "OPERATIONS_STRESS_SEED") {
            let trimmed = text.trimmingPrefix("0x")
            if let seed = UInt64(trimmed, radix: trimmed.count == text.count ? 10 : 16) {
                return seed
            }
            print("OPERATIONS_STRESS_SEED=\(text) is not a number; using a random seed")
        }
        return UInt64.random(in: .min ... .max)
    }

    /// How long the soak test runs, or `nil` (the soak test is skipped) if the variable is absent.
    static var soakSeconds: Double? {
        value(of: "OPERATIONS_SOAK_SECONDS").flatMap(Double.init).flatMap { $0 > 0 ? $0 : nil }
    }

    /// Whether a worker pool that stays busy after a stress run is a violation
    /// (`OPERATIONS_STRESS_POOL_CHECK=1`): only when the stress suites run alone, as CI runs them
    /// once (see ``StressHarness/workerPoolIdleViolation(seconds:)``).
    static var requiresIdleWorkerPool: Bool {
        value(of: "OPERATIONS_STRESS_POOL_CHECK") == "1"
    }

    private static func value(of name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
