import Dispatch
@testable import Operations

/// A clock that only the test moves: `now` changes when ``advance(by:)`` is called, and a
/// `sleep(until:)` suspends until an advance passes its deadline (or its task is cancelled, which
/// ends the sleep at once with a `CancellationError`).
///
/// A test waits for the sleeps it expects to be registered with ``waitForSleepers(_:seconds:)``
/// before it advances, so that it never races the code under test; ``sleeperCount`` tells how
/// many sleeps wait (a cancelled one is gone at once).
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        /// Time since the clock was made.
        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct Watcher {
        var isSatisfied: @Sendable (Int) -> Bool
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID = 0
        var sleepers: [Int: Sleeper] = [:]
        /// Sleeps cancelled before they were registered.
        var cancelledEarly: Set<Int> = []
        var watchers: [Int: Watcher] = [:]

        /// Takes the watchers that the current number of sleepers satisfies.
        mutating func takeSatisfiedWatchers() -> [CheckedContinuation<Bool, Never>] {
            let count = sleepers.count
            let satisfied = watchers.filter { $0.value.isSatisfied(count) }
            for id in satisfied.keys { watchers[id] = nil }
            return satisfied.values.map(\.continuation)
        }
    }

    private let state = LockedBox(State())

    var now: Instant { state.withLockedValue { $0.now } }
    var minimumResolution: Duration { .zero }

    /// How many sleeps wait for a later instant.
    var sleeperCount: Int { state.withLockedValue { $0.sleepers.count } }

    /// The deadlines of the sleepers waiting now, earliest first, as offsets from the clock's start.
    var deadlines: [Duration] { state.withLockedValue { $0.sleepers.values.map(\.deadline.offset).sorted() } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLockedValue { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case registered([CheckedContinuation<Bool, Never>]), passed, cancelled }
                let outcome: Outcome = state.withLockedValue { state in
                    if state.cancelledEarly.remove(id) != nil { return .cancelled }
                    if deadline <= state.now { return .passed }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return .registered(state.takeSatisfiedWatchers())
                }
                switch outcome {
                case .registered(let watchers):
                    for watcher in watchers { watcher.resume(returning: true) }
                case .passed:
                    continuation.resume()
                case .cancelled:
                    continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let (sleeper, watchers): (Sleeper?, [CheckedContinuation<Bool, Never>]) = state.withLockedValue { state in
                guard let sleeper = state.sleepers.removeValue(forKey: id) else {
                    state.cancelledEarly.insert(id)
                    return (nil, [])
                }
                return (sleeper, state.takeSatisfiedWatchers())
            }
            sleeper?.continuation.resume(throwing: CancellationError())
            for watcher in watchers { watcher.resume(returning: true) }
        }
    }

    /// Moves the clock forward by `duration`, waking every sleep whose deadline it passes (before
    /// it returns, they are no longer counted in ``sleeperCount``).
    func advance(by duration: Duration) {
        let (woken, watchers): ([Sleeper], [CheckedContinuation<Bool, Never>]) = state.withLockedValue { state in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers[id] = nil }
            return (due.values.sorted { $0.deadline < $1.deadline }, state.takeSatisfiedWatchers())
        }
        for sleeper in woken { sleeper.continuation.resume() }
        for watcher in watchers { watcher.resume(returning: true) }
    }

    /// Suspends until at least `count` sleeps wait; `false` after `seconds` (a hang guard).
    @discardableResult
    func waitForSleepers(_ count: Int, seconds: Int = 30) async -> Bool {
        await waitForSleeperCount(seconds: seconds) { $0 >= count }
    }

    /// Suspends until no sleep waits; `false` after `seconds` (a hang guard).
    @discardableResult
    func waitUntilNoSleepers(seconds: Int = 30) async -> Bool {
        await waitForSleeperCount(seconds: seconds) { $0 == 0 }
    }

    private func waitForSleeperCount(seconds: Int, _ isSatisfied: @escaping @Sendable (Int) -> Bool) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let id: Int? = state.withLockedValue { state in
                if isSatisfied(state.sleepers.count) { return nil }
                let id = state.nextID
                state.nextID += 1
                state.watchers[id] = Watcher(isSatisfied: isSatisfied, continuation: continuation)
                return id
            }
            guard let id else {
                continuation.resume(returning: true)
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds)) { [state] in
                let watcher = state.withLockedValue { $0.watchers.removeValue(forKey: id) }
                watcher?.continuation.resume(returning: false)
            }
        }
    }
}
