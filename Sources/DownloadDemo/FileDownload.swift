#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Operations
import Synchronization

/// Downloads one file: a synchronous ``Op`` whose ``main()`` blocks its worker thread while the
/// simulated network delivers the file 4 KB at a time.
///
/// It finds its size and checksum in the manifest of the ``ManifestDownload`` it depends on, and
/// checks ``Op/isCancelled`` between chunks, so that cancelling it mid-download stops it early.
final class FileDownload: Op, @unchecked Sendable {
    // @unchecked Sendable (restated from Op, which a subclass must do): the properties added here
    // are constants of Sendable types, and the only mutable state, `state`, is in a `Mutex`.

    /// How long the server takes before the first byte.
    static let firstByteMicroseconds: UInt32 = 4_000
    /// The size of a chunk of the simulated network.
    static let chunkSize = 4 * 1024
    /// How long each chunk takes, so a download's duration is proportional to its size.
    static let chunkMicroseconds: UInt32 = 8_000

    /// The file's name.
    let fileName: String
    private let path: String
    private let tracker: DownloadTracker

    private struct State {
        var entry: ManifestEntry?
        var data: [UInt8]?
        var receivedBytes = 0
        var milliseconds = 0
        var runningAtStart = 0
        var cancellationReason: String?
        var failure: String?
    }

    private let state = Mutex(State())

    /// Creates the download of `fileName` from `files`.
    init(fileName: String, from files: DemoFiles, tracker: DownloadTracker) {
        self.fileName = fileName
        self.path = files.path(of: fileName)
        self.tracker = tracker
        super.init()
        name = fileName
    }

    // MARK: Results

    /// The file's manifest entry, once the download has started.
    var entry: ManifestEntry? { state.withLock { $0.entry } }

    /// The whole content, once the download has completed.
    var data: [UInt8]? { state.withLock { $0.data } }

    /// Why the download was cancelled, when ``cancel(because:)`` gave a reason.
    var cancellationReason: String? { state.withLock { $0.cancellationReason } }

    /// Why the download failed, if it failed.
    var failure: String? { state.withLock { $0.failure } }

    /// A log line describing how the download ended.
    var outcome: String {
        let state = state.withLock { $0 }
        let name = Format.padded(fileName, to: 15)
        if isCancelled {
            let reason = state.cancellationReason ?? "cancelled"
            if let entry = state.entry {
                return "✗ \(name) cancelled while downloading, stopped after \(Format.kilobytes(state.receivedBytes)) of \(Format.kilobytes(entry.size)) (\(reason))"
            }
            return "✗ \(name) cancelled before it started (\(reason))"
        }
        if let failure = state.failure {
            return "! \(name) failed: \(failure)"
        }
        let size = Format.leftPadded(Format.kilobytes(state.receivedBytes), to: 7)
        let time = Format.leftPadded("\(state.milliseconds) ms", to: 5)
        let priority = Format.padded("\(queuePriority)", to: 8)
        return "✓ \(name) \(size) in \(time)  \(priority) [\(state.runningAtStart) at once]"
    }

    // MARK: Cancelling

    /// Cancels the download and records why, for the log.
    func cancel(because reason: String) {
        state.withLock { $0.cancellationReason = reason }
        cancel()
    }

    // MARK: Work

    /// Fetches the file, chunk by chunk, until it is complete or the operation is cancelled.
    override func main() {
        // A queue never runs a cancelled operation's main(), but cancellation can come at any
        // moment, so check first, as with Foundation.
        guard !isCancelled else { return }
        // Dependencies are ordinary objects: read the manifest the dependency downloaded.
        let manifestDownload = dependencies.lazy.compactMap { $0 as? ManifestDownload }.first
        guard let entry = manifestDownload?.manifest?.entry(named: fileName) else {
            state.withLock { $0.failure = "the manifest does not list it" }
            return
        }
        let running = tracker.started(fileName, priority: queuePriority)
        defer { tracker.stopped() }
        state.withLock {
            $0.entry = entry
            $0.runningAtStart = running
        }

        let began = ContinuousClock.now
        usleep(Self.firstByteMicroseconds)
        do {
            let (bytes, isComplete) = try FileIO.read(path, chunkSize: Self.chunkSize) { received in
                state.withLock { $0.receivedBytes = received }
                guard !isCancelled else { return false }
                usleep(Self.chunkMicroseconds)
                return !isCancelled
            }
            let elapsed = began.duration(to: .now).components
            state.withLock {
                $0.receivedBytes = bytes.count
                $0.milliseconds = Int(elapsed.seconds) * 1000 + Int(elapsed.attoseconds / 1_000_000_000_000_000)
                if isComplete { $0.data = bytes }
            }
        } catch {
            state.withLock { $0.failure = "\(error)" }
        }
    }
}
