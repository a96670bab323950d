import Dispatch
@testable import Operations

/// Runs `body` on a new thread of its own (not one of a pool, which may be the caller's own
/// thread), started the way the library starts its workers, and waits until `body` returns.
func runOnNewThread(_ body: @escaping @Sendable () -> Void) {
    let returned = DispatchSemaphore(value: 0)
    let started = WorkerPool.shared.startThread {
        body()
        returned.signal()
    }
    precondition(started, "the system refused a thread")
    returned.wait()
}
