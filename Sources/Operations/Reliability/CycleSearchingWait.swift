import Dispatch

/// How a wait ends the dependency cycles that it waits for.
///
/// Not at once: most waits return soon, and a search costs as much as the part of the graph it
/// visits (a queue of a hundred thousand operations, say). A wait that lasts ``searchDelay``
/// searches what it waits for (``DependencyCycles/endCycles(reachableFrom:)``,
/// ``DependencyCycles/endCycles(blockingMembersOf:)``), and searches again while it lasts, at
/// intervals that double up to ``longestInterval`` (a cycle may be closed while it waits). Only
/// if a cycle can exist at all when the wait begins (``DependencyCycles/mayExist``).
enum CycleSearchingWait {
    /// How long a wait lasts before it searches for cycles.
    static let searchDelay: Duration = .milliseconds(50)

    /// The longest interval between two searches of one wait.
    static let longestInterval: Duration = .seconds(60)

    /// Blocks until `semaphore` is signalled, calling `search` if the wait lasts.
    static func block(on semaphore: DispatchSemaphore, search: () -> Void) {
        guard DependencyCycles.mayExist else {
            semaphore.wait()
            return
        }
        var interval = searchDelay
        while semaphore.wait(timeout: .now() + interval.dispatchInterval) == .timedOut {
            search()
            interval = nextInterval(after: interval)
        }
    }

    /// Calls `search` while an `async` wait lasts, until the returned watch is stopped; `nil`
    /// if no cycle can exist.
    static func watch(search: @escaping @Sendable () -> Void) -> Watch? {
        guard DependencyCycles.mayExist else { return nil }
        let watch = Watch(search: search)
        watch.schedule(after: searchDelay)
        return watch
    }

    /// The searches of one `async` wait.
    ///
    /// The search (which holds what the wait waits for) is dropped as soon as the wait is over: a
    /// search scheduled for later holds only this watch, so nothing waited for outlives its wait
    /// by up to ``longestInterval``.
    final class Watch: Sendable {
        private let search: LockedBox<(@Sendable () -> Void)?>

        fileprivate init(search: @escaping @Sendable () -> Void) {
            self.search = LockedBox(search)
        }

        /// The wait is over: no more searches.
        func stop() {
            let search = self.search.withLockedValue { search in
                defer { search = nil }
                return search
            }
            withExtendedLifetime(search) {}   // released outside the lock
        }

        fileprivate func schedule(after interval: Duration) {
            DeadlineTimer.run(after: interval) { [self] in
                guard let search = self.search.withLockedValue({ $0 }) else { return }
                search()
                schedule(after: nextInterval(after: interval))
            }
        }
    }

    private static func nextInterval(after interval: Duration) -> Duration {
        min(max(interval * 2, .seconds(1)), longestInterval)
    }
}
