import Operations

/// A client of a rate-limited API: at most 5 calls start in any 100 ms, at most 2 run at once,
/// across every queue that calls it; waiting for a permit holds no thread, and a request
/// cancelled while it waits leaves without calling.
///
/// An API that allows 50 requests a second and 2 at a time, called from two queues (say, the
/// requests of users and a background sync), is the shape of many third-party APIs. Here each
/// call records when it started and ended, and the summary checks the pace and the overlap.
enum RateLimitedClientExample {
    /// What the calls saw.
    final class CallLog: Sendable {
        private struct State {
            var starts: [ContinuousClock.Instant] = []
            var running = 0
            var mostRunning = 0
        }

        private let state = Locked(State())

        /// A call starts.
        func start() {
            state.withLock { state in
                state.starts.append(ContinuousClock.now)
                state.running += 1
                state.mostRunning = max(state.mostRunning, state.running)
            }
        }

        /// A call ends.
        func end() {
            state.withLock { $0.running -= 1 }
        }

        var callCount: Int { state.withLock { $0.starts.count } }
        var mostRunning: Int { state.withLock { $0.mostRunning } }

        /// When the last call started.
        var lastStart: ContinuousClock.Instant? { state.withLock { $0.starts.max() } }
    }

    /// The API's limits, as conditions every call carries.
    static let perWindow = 5
    static let window = Duration.milliseconds(100)
    static let atOnce = 2

    /// A call of the API: 10 ms of work, under both limits.
    static func call(_ log: CallLog) -> BlockOp {
        let op = BlockOp {
            log.start()
            blockFor(.milliseconds(10))
            log.end()
        }
        op.addCondition(.rateLimited("example-api", permits: perWindow, per: window))
        op.addCondition(.limited("example-api-connections", permits: atOnce))
        return op
    }

    /// Blocks the calling thread for `duration` (a stand-in for a network call).
    static func blockFor(_ duration: Duration) {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: duration)
        while clock.now < end {}
    }

    static let example = Example(
        name: "rate-limited-client",
        title: "A rate-limited API client across two queues",
        source: "Server-side fit: OpCondition.rateLimited, OpCondition.limited",
        expected: [
            "20 calls from two queues",
            "20 calls needed at least 300 ms to start, 5 per 100 ms: true",
            "at most 2 calls ran at once: true",
            "a request cancelled while it waited for a permit left without calling the API: true",
        ]
    ) { output in
        let users = OpQueue()
        users.name = "user requests"
        let sync = OpQueue()
        sync.name = "background sync"
        let log = CallLog()

        let calls = (0..<20).map { _ in call(log) }
        let added = ContinuousClock.now
        for (index, op) in calls.enumerated() {
            (index.isMultiple(of: 2) ? users : sync).addOperation(op)
        }
        // One more that the user gives up on while it waits for its turn.
        let abandoned = call(log)
        users.addOperation(abandoned)
        abandoned.cancel()

        await users.waitUntilAllOperationsAreFinished()
        await sync.waitUntilAllOperationsAreFinished()
        output.line("\(log.callCount) calls from two queues")
        // A burst of 5 at once, then 5 more each 100 ms: the 20th starts at least 300 ms after
        // the first permit was taken. (Measured from the adds: a body notes its start a moment
        // after its permit, so windows between the notes themselves could read one too many.)
        let needed = window * (calls.count / perWindow - 1)
        output.line("\(calls.count) calls needed at least \(Int(needed / .milliseconds(1))) ms to start, \(perWindow) per 100 ms: \(log.lastStart.map { added.duration(to: $0) >= needed } ?? false)")
        output.line("at most \(atOnce) calls ran at once: \(log.mostRunning <= atOnce)")
        output.line("a request cancelled while it waited for a permit left without calling the API: \(abandoned.isCancelled && log.callCount == 20)")
    }
}
