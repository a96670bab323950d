import Dispatch
import Synchronization

/// An in-process stand-in for a network session: no sockets, no I/O. It "serves" a few named
/// resources by playing each transfer as a ``TransportTask`` that calls its delegate back on a
/// serial Dispatch queue with small delays, and it can drop or stall the transfer of a given
/// resource.
///
/// The bytes of a resource depend only on its name, so their checksums are the same on every run.
/// The transport also counts how many of its tasks are in flight at once.
final class SimulatedTransport: Sendable {
    /// How the transport answers a request for one resource.
    enum Behavior: Sendable {
        /// Sends all `size` bytes.
        case serve(size: Int)
        /// Sends the first `afterChunks` chunks of `size` bytes, then drops the connection.
        case reset(size: Int, afterChunks: Int)
        /// Sends the first `afterChunks` chunks of `size` bytes, then goes silent for good.
        case stall(size: Int, afterChunks: Int)
    }

    /// The size of a chunk.
    let chunkSize: Int
    /// The time between two steps of a transfer.
    let chunkInterval: DispatchTimeInterval
    /// The serial queue every delegate call comes on, like a session's delegate queue.
    let callbackQueue = DispatchQueue(label: "SimulatedTransport.callbacks")

    private let resources: [String: Behavior]
    private let inFlight = Atomic<Int>(0)
    private let mostInFlight = Atomic<Int>(0)

    /// A transport that serves `resources`, by name.
    init(resources: [String: Behavior], chunkSize: Int = 1024, chunkInterval: DispatchTimeInterval = .milliseconds(2)) {
        self.resources = resources
        self.chunkSize = chunkSize
        self.chunkInterval = chunkInterval
    }

    /// A suspended task that transfers the resource called `name` and reports to `delegate`.
    func dataTask(named name: String, delegate: any TransportDelegate) -> TransportTask {
        TransportTask(resourceName: name, steps: script(for: name), transport: self, delegate: delegate)
    }

    /// The most tasks that were in flight (resumed and not yet over) at the same time.
    var peakTasksInFlight: Int {
        mostInFlight.load(ordering: .relaxed)
    }

    func taskDidStart() {
        let now = inFlight.wrappingAdd(1, ordering: .relaxed).newValue
        mostInFlight.max(now, ordering: .relaxed)
    }

    func taskDidEnd() {
        inFlight.wrappingSubtract(1, ordering: .relaxed)
    }

    /// The bytes of the resource called `name`: a pattern seeded by the name.
    static func content(of name: String, size: Int) -> [UInt8] {
        let seed = name.utf8.reduce(0) { ($0 &* 31 &+ Int($1)) & 0xFFFF }
        return (0..<size).map { UInt8(truncatingIfNeeded: ($0 &* 7) ^ ($0 >> 8) ^ seed) }
    }

    private func script(for name: String) -> [TransportTask.Step] {
        guard let behavior = resources[name] else { return [.end(.notFound)] }
        let (size, ending): (Int, TransportTask.Step?) = switch behavior {
        case .serve(let size): (size, .end(nil))
        case .reset(let size, _): (size, .end(.connectionReset))
        case .stall(let size, _): (size, nil)
        }
        let bytes = Self.content(of: name, size: size)
        var chunks = stride(from: 0, to: size, by: chunkSize).map {
            TransportTask.Step.chunk(Array(bytes[$0..<min($0 + chunkSize, size)]))
        }
        switch behavior {
        case .serve: break
        case .reset(_, let count), .stall(_, let count): chunks = Array(chunks.prefix(count))
        }
        return [.response(expectedLength: size)] + chunks + (ending.map { [$0] } ?? [])
    }
}
