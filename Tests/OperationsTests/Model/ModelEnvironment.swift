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
/// - `OPERATIONS_MODEL_ALL_DEFECTS=1`: turns off every ``ModelKnownDefects`` switch.
enum ModelEnvironment {
    /// Sequences per mode by default: about 10 s of a debug build on two cores.
    static let defaultSequences = (staged: 1_500, interleaved: 500)

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
