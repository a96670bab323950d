import Testing

/// Runs the tests that carry it one at a time, process-wide: for the tests that spawn exit tests.
///
/// While an exit test's child process runs, the parent side of `#expect(processExitsWith:)` reads
/// the child's output with a blocking read on one of Swift's cooperative threads, of which Linux
/// has one per core (two on a small CI machine). Two exit tests at once hold both, and every
/// `async` test of the suite stalls until a child exits: seconds per child under a sanitizer, long
/// enough for timing tests to miss their deadlines. Taking turns keeps one cooperative thread free.
/// A test waiting for its turn suspends; it holds no thread.
struct OneExitTestAtATime: TestTrait, TestScoping {
    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        await ExitTestTurns.shared.take()
        do {
            try await function()
        } catch {
            await ExitTestTurns.shared.give()
            throw error
        }
        await ExitTestTurns.shared.give()
    }
}

extension Trait where Self == OneExitTestAtATime {
    /// Runs this test's exit tests while no other test carrying the trait runs (see
    /// ``OneExitTestAtATime``).
    static var oneExitTestAtATime: Self { OneExitTestAtATime() }
}

/// The turns of ``OneExitTestAtATime``: a first-come, first-served lock that suspends its waiters.
actor ExitTestTurns {
    static let shared = ExitTestTurns()

    private var isTaken = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func take() async {
        if !isTaken {
            isTaken = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func give() {
        if waiters.isEmpty {
            isTaken = false
        } else {
            waiters.removeFirst().resume()   // the turn passes on: still taken
        }
    }
}
