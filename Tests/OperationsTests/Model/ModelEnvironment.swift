#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The environment variables that steer the model-based test.
///
/// - `OPERATIONS_MODEL_SEED`: the seed of the first sequence (decimal, or hexadecimal with `0x`),
///   to replay a failure; a random one otherwise. The seed is printed.
/// - `OPERATIONS_MODEL_SEQUENCES`: how many sequences each mode runs (see ``defaultSequences``).
/// - `OPERATIONS_MODEL_SECONDS`: the most time each mode spends playing sequences (see
///   ``defaultSeconds``); it stops early, after the sequence under way, when this has passed.
/// - `OPERATIONS_MODEL_ALL_DEFECTS=1`: turns off every ``ModelKnownDefects`` switch, and
///   `OPERATIONS_MODEL_DEFECTS_OFF=name,name` the switches named.
enum ModelEnvironment {
    /// Sequences per mode by default: 3 to 4 s of a debug build on two cores, both modes running
    /// side by side.
    ///
    /// Short on purpose: while a mode's child process runs, the exit test that waits for it
    /// holds one of Swift's cooperative threads (two on a small Linux machine), and the rest of
    /// the suite runs without it. CI runs a long batch on its own (`.ci/run`, "model-based test,
    /// long run"), where holding them harms nothing.
    static let defaultSequences = (staged: 300, interleaved: 200)

    /// The time each mode may take by default: more than the default sequences take in a debug
    /// build, so that they all run there, and a bound under a sanitizer's slowdown.
    static let defaultSeconds = 8.0

    /// The time each mode may take.
    static var seconds: Double {
        value(of: "OPERATIONS_MODEL_SECONDS").flatMap(Double.init).flatMap { $0 > 0 ? $0 : nil } ?? defaultSeconds
    }

    /// The seed of the first sequence.
    static func seed() -> UInt64 {
        if let text = value(of: "OPERATIONS_MODEL_SEED") {
            let isHexadecimal = text.hasPrefix("0x")
            if let seed = UInt64(isHexadecimal ? String(text.dropFirst(2)) : text, radix: isHexadecimal ? 16 : 10) {
                return seed
            }
            print("OPERATIONS_MODEL_SEED=\(text) is not a number; using a random seed")
        }
        return UInt64.random(in: .min ... .max)
    }

    /// How many sequences to run, if set.
    static var sequences: Int? {
        value(of: "OPERATIONS_MODEL_SEQUENCES").flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
    }

    /// Whether a seed was given (then only that seed's sequences run, unless a count is given too).
    static var isReplay: Bool { value(of: "OPERATIONS_MODEL_SEED") != nil }

    private static func value(of name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
