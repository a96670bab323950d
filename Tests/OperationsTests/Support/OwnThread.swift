import Foundation

/// Runs `body`, which blocks for long (a stress run waiting for thousands of operations), on a
/// thread of its own, and suspends until it returns.
///
/// Swift Testing runs test functions on Swift's cooperative pool, which has about one thread
/// per core. A test that blocks one of them for seconds, while others block the rest, starves
/// every `async` body on the pool, the bodies of the `AsyncOp`s under test included.
func onOwnThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
        let thread = Thread {
            continuation.resume(returning: body())
        }
        thread.stackSize = 4 << 20
        thread.start()
    }
}
