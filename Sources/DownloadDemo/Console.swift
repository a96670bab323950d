#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The demo's log: prints whole lines, one at a time, from any thread, each stamped with the
/// milliseconds since the demo started.
enum Console {
    /// When the demo started; set by the first call of ``log(_:)``.
    private static let start = ContinuousClock.now

    /// Keeps lines from different threads from interleaving.
    private static let lock = Mutex<Void>(())

    /// The milliseconds since the demo started.
    static var elapsedMilliseconds: Int {
        let elapsed = start.duration(to: .now).components
        return Int(elapsed.seconds) * 1000 + Int(elapsed.attoseconds / 1_000_000_000_000_000)
    }

    /// Prints `message` after a time stamp, such as `[  42 ms] manifest: 40 entries`.
    static func log(_ message: String) {
        let stamp = Format.leftPadded(String(elapsedMilliseconds), to: 4)
        lock.withLock { _ in print("[\(stamp) ms] \(message)") }
    }

    /// Prints `text` as it is, without a time stamp.
    static func write(_ text: String) {
        lock.withLock { _ in print(text) }
    }

    /// Prints `text` and a newline on standard error, as it is: for messages that must stay out
    /// of standard output, such as when it is piped into another program.
    static func writeError(_ text: String) {
        lock.withLock { _ in writeToStandardError(Array((text + "\n").utf8)) }
    }
}

/// Writes all of `bytes` to file descriptor 2, unbuffered (outside ``Console``, whose
/// `write(_:)` would hide the C function's name).
private func writeToStandardError(_ bytes: [UInt8]) {
    var written = 0
    while written < bytes.count {
        let result = bytes[written...].withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        guard result > 0 else { return }
        written += result
    }
}
