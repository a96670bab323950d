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
}
