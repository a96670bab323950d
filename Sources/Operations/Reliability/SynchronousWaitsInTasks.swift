import OperationsRuntimeShims

/// Reports each place that calls one of the library's synchronous waits inside a Swift task, once
/// (``OpDiagnostics/Diagnostic/synchronousWaitInTask(wait:target:callSite:)``).
///
/// Such a wait blocks the thread of the task: one of the few threads of Swift's cooperative pool
/// (one per core), or the main thread. The library's `async` work no longer needs those threads
/// (see ``OpTaskExecutor``), so the wait returns, but the thread is lost to every other task
/// meanwhile; the report suggests the `async` form. The wait itself is not changed.
///
/// A call site is told apart by the return address into the caller's code, read from the stack
/// (no parameter is added to the waits, whose signatures are Foundation's); where it cannot be read
/// (a C library without `backtrace`, such as musl), only the first such wait is reported. A wait on one of the
/// library's own threads (the body of an `AsyncOp`, which runs on ``OpTaskExecutor``) is not
/// reported: that pool grows when its threads block.
enum SynchronousWaitsInTasks {
    /// One of the synchronous waits, named as it is written.
    enum Wait: String, Sendable {
        /// ``Op/waitUntilFinished()-2def2``.
        case operation = "waitUntilFinished()"
        /// ``OpQueue/waitUntilAllOperationsAreFinished()``.
        case queue = "waitUntilAllOperationsAreFinished()"
        /// ``OpQueue/addOperations(_:waitUntilFinished:)`` with `true`.
        case addedOperations = "addOperations(_:waitUntilFinished: true)"

        /// The `async` form to write instead.
        var asyncForm: String {
            switch self {
            case .operation: "await op.waitUntilFinished()"
            case .queue: "await queue.waitUntilAllOperationsAreFinished()"
            case .addedOperations: "await queue.addOperations(ops, waitUntilFinished: true)"
            }
        }
    }

    /// The call sites reported so far (return addresses).
    private static let reported = LockedBox(Set<UInt>())

    /// The most call sites remembered; beyond it (code generated at run time, say), nothing more
    /// is reported.
    static let callSiteLimit = 4_096

    /// Reports the wait if the calling thread runs a task and is not one of the library's. Call it
    /// directly from the public wait, first thing: the call site is read two calls up from here.
    @inline(never)
    static func note(_ wait: Wait, target: @autoclosure () -> String) {
        guard withUnsafeCurrentTask(body: { $0 != nil }), ThreadContext.current.pointee.worker == nil else { return }
        // Two calls up: from here to the wait, from the wait to its caller.
        let address = operations_return_address(2)
        let site = UInt(bitPattern: address)
        let isNew = reported.withLockedValue { sites in
            guard sites.count < callSiteLimit else { return false }
            return sites.insert(site).inserted
        }
        guard isNew else { return }
        OpDiagnostics.report(.synchronousWaitInTask(wait: wait.rawValue, target: target(), callSite: describe(address)))
    }

    /// `image+0xoffset` for `address`, or `unknown` where the platform cannot tell.
    static func describe(_ address: UnsafeMutableRawPointer?) -> String {
        var buffer = [CChar](repeating: 0, count: 512)
        guard operations_describe_address(address, &buffer, buffer.count) != 0 else { return "an unknown place" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
