import Foundation
import Testing

/// Runs a suite's tests on threads of their own instead of Swift's cooperative pool.
///
/// A synchronous test runs on a cooperative thread, and Linux has one per core. A suite whose
/// synchronous tests wait (for a cycle's grace period, for queues to drain) or compute for
/// seconds under the checked build or a sanitizer holds those threads, and every `async` test of
/// the run stalls meanwhile: tests that wait for a timer then miss their deadlines in the crowd.
/// With this trait the suite's tests prefer a task executor that gives every job a thread, so
/// they hold none of the cooperative pool's.
struct OffTheCooperativePool: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else {
            try await function()
            return
        }
        try await withTaskExecutorPreference(ThreadPerJobExecutor.shared) {
            try await function()
        }
    }
}

extension Trait where Self == OffTheCooperativePool {
    /// Runs the tests on threads of their own (see ``OffTheCooperativePool``).
    static var offTheCooperativePool: Self { OffTheCooperativePool() }
}

/// A task executor that runs each job on a new thread: slow, and unbounded, which is the point
/// (a job that blocks holds only its own thread).
final class ThreadPerJobExecutor: TaskExecutor {
    static let shared = ThreadPerJobExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        Thread { job.runSynchronously(on: executor) }.start()
    }
}
