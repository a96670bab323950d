#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the library reports problems it detected, such as dependency cycles.
///
/// By default every report is written to standard error. Install your own handler to route the
/// reports to your logging system:
///
/// ```swift
/// OpDiagnostics.handler = { diagnostic in logger.error("\(diagnostic)") }
/// ```
public enum OpDiagnostics {
    /// One report.
    public enum Diagnostic: Sendable, CustomStringConvertible {
        /// A dependency cycle was found; nothing was changed. The error names its operations.
        ///
        /// Reported once per cycle. The cycle can still be broken: cancel one of its operations or
        /// remove one of its dependencies. Otherwise it is ended, and reported again as
        /// ``dependencyCycleEnded(_:)``, when something waits for it, or once all its operations
        /// are in queues and it has stayed unbroken for ``OpQueue/dependencyCycleGracePeriod``.
        case dependencyCycle(DependencyCycleError)

        /// A dependency cycle was ended: each of its operations was cancelled with the error,
        /// which its ``Op/error`` now holds, and none of their bodies runs.
        case dependencyCycleEnded(DependencyCycleError)

        /// The library's worker pool reached its thread limit, and every one of its `threads` has
        /// been blocked for over a second while work waits: every queue that runs on the pool is
        /// stalled until one of them returns. `operations` names the executing operations of
        /// those queues, which hold the threads.
        ///
        /// Reported once, until the pool recovers. Operations that block their thread (sleeping,
        /// waiting on a lock, a semaphore or another operation) hold a thread each; write work that
        /// waits as an ``AsyncOp``, or raise the limit with `OPERATIONS_MAX_THREADS`.
        case workerPoolExhausted(threads: Int, operations: [String])

        /// A synchronous wait, `wait` (such as `waitUntilFinished()`), was called inside a Swift
        /// task, on `target` (the operation or queue it waits for), at `callSite`.
        ///
        /// The wait blocks the task's thread until it returns: one of the few threads of Swift's
        /// cooperative pool (one per core), or the main thread, which every other task then goes
        /// without. The library's own `async` work runs elsewhere (see ``OpTaskExecutor``), so the
        /// wait returns; the report only says where to use the `async` form, which suspends
        /// instead. The wait is not changed.
        ///
        /// Reported once per call site. `callSite` is `image+0xoffset`, the place in the caller's
        /// code: `addr2line -e <image> <offset>` (or `atos` on Apple platforms) names the line. A
        /// wait in the body of an ``AsyncOp``, which runs on the library's threads, is not
        /// reported: that pool adds threads when its own block.
        case synchronousWaitInTask(wait: String, target: String, callSite: String)

        /// A line describing the report, starting with `Operations:`; for a cycle with operations
        /// in queues, followed by the lines of their queues' dumps that show them
        /// (``DependencyCycleError/queueDump``, see ``OpQueue/dump()``).
        public var description: String {
            switch self {
            case .workerPoolExhausted(let threads, let operations):
                "Operations: all \(threads) threads of the worker pool have been blocked for over a second while work waits, and the pool is at its limit: every queue on the pool is stalled. Operations holding them: \(operations.isEmpty ? "none found in a queue (completion blocks or other jobs hold them)" : operations.joined(separator: ", ")). Operations that block their thread hold one each: write work that waits as an AsyncOp, or raise the limit with OPERATIONS_MAX_THREADS."
            case .dependencyCycle(let error):
                "Operations: dependency cycle found: \(error.loop). Nothing was changed: break it by cancelling one of these operations or removing one of these dependencies (removeDependency(_:)). Otherwise it is ended with a DependencyCycleError when something waits for one of them, or once all of them are in queues and it has stayed unbroken for OpQueue.dependencyCycleGracePeriod.\(error.queueDump.map { "\n" + $0 } ?? "")"
            case .dependencyCycleEnded(let error):
                "Operations: \(error)\(error.queueDump.map { "\n" + $0 } ?? "")"
            case .synchronousWaitInTask(let wait, let target, let callSite):
                "Operations: \(wait) was called on \(target) inside a task, at \(callSite): it blocks the task's thread, one of the few that run every task in the process (Swift's cooperative pool has one per core), until it returns. Write `\(SynchronousWaitsInTasks.Wait(rawValue: wait)?.asyncForm ?? "await")` there, which suspends instead of blocking. Reported once per call site; `addr2line -e <image> <offset>` names the line."
            }
        }
    }

    private static let storedHandler = LockedBox<@Sendable (Diagnostic) -> Void>(OpDiagnostics.writeToStandardError)

    /// Receives every report, on the thread that detected the problem, outside the library's locks.
    public static var handler: @Sendable (Diagnostic) -> Void {
        get { storedHandler.withLockedValue { $0 } }
        set {
            let old = storedHandler.withLockedValue { handler in
                defer { handler = newValue }
                return handler
            }
            withExtendedLifetime(old) {}   // released outside the lock
        }
    }

    /// The default handler: writes the report to standard error.
    public static let writeToStandardError: @Sendable (Diagnostic) -> Void = { diagnostic in
        var line = "\(diagnostic)\n"
        line.withUTF8 { bytes in
            _ = write(2, bytes.baseAddress, bytes.count)
        }
    }

    static func report(_ diagnostic: Diagnostic) {
        handler(diagnostic)
    }
}
