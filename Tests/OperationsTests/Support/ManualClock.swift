@testable import Operations

/// A clock that moves only when a test advances it: sleeps on it end when ``advance(by:)``
/// reaches their deadlines, with no real waiting.
final class ManualClock: Clock, Sendable {
    /// A point in the clock's time: how far it is from the clock's start.
    struct Instant: InstantProtocol {
        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        let deadline: Instant
        let continuation: CheckedContinuation<Void, Never>
    }

    private let state = LockedBox((now: Instant(offset: .zero), sleepers: [Sleeper]()))

    init() {}

    var now: Instant { state.withLockedValue { $0.now } }

    var minimumResolution: Duration { .zero }

    /// Suspends until the clock is advanced to `deadline` (not cancellable: the library's sleeps
    /// are never cancelled).
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        await withCheckedContinuation { continuation in
            let resumesNow = state.withLockedValue { state in
                guard deadline > state.now else { return true }
                state.sleepers.append(Sleeper(deadline: deadline, continuation: continuation))
                return false
            }
            if resumesNow { continuation.resume() }
        }
    }

    /// Moves the clock forward by `duration`, ending the sleeps whose deadlines it reaches.
    func advance(by duration: Duration) {
        let due: [Sleeper] = state.withLockedValue { state in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// How many sleeps wait for the clock now.
    var sleeperCount: Int { state.withLockedValue { $0.sleepers.count } }

    /// The deadlines of the sleeps that wait, earliest first, as offsets from the clock's start.
    var deadlines: [Duration] { state.withLockedValue { $0.sleepers.map(\.deadline.offset).sorted() } }
}
