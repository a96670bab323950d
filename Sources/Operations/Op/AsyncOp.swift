/// An operation whose work finishes after its body returns: a callback, another thread, an
/// event. The library keeps its state and notifications right; you call ``finish()`` once.
///
/// Foundation makes you override `start`, `isExecuting`, `isFinished` and `isAsynchronous` and
/// post KVO notifications by hand to write such an operation. Here you subclass `AsyncOp`,
/// override ``execute()`` to start the work, and call ``finish()`` exactly once, from any
/// thread, when it is done:
///
/// ```swift
/// final class Download: AsyncOp, @unchecked Sendable {
///     let url: String
///     private(set) var data: [UInt8]?
///     init(url: String) { self.url = url }
///     override func execute() {
///         client.fetch(url) { data in
///             self.data = data
///             self.finish()
///         }
///     }
/// }
/// ```
///
/// The operation is executing from the moment `execute()` is called until `finish()` is, and it
/// holds its slot of the queue's ``OpQueue/maxConcurrentOperationCount`` all that time. A
/// cancelled `AsyncOp` that never started does not call `execute()`: it goes straight to
/// finished. Cancelling a running one sets ``Op/isCancelled``; the work should notice, stop,
/// and still call `finish()`.
///
/// - Important: Calling `finish()` twice, or before `execute()` was called, is a programmer error
///   and traps.
open class AsyncOp: Op, @unchecked Sendable {
    // @unchecked Sendable: adds no state of its own to Op's.

    /// Creates an asynchronous operation.
    public override init() {
        super.init(asynchronous: true)
    }

    /// Starts the work. Override it; do not call `super`. Call ``finish()`` when the work is done.
    ///
    /// It is called on the thread that started the operation (a worker thread for an operation in
    /// a queue) and may return before the work is done.
    open func execute() {}

    /// Calls ``execute()``; an asynchronous operation's work starts there.
    public final override func main() {
        execute()
    }

    /// Marks the operation finished. Call it exactly once, from any thread, when the work is done
    /// (or has stopped because the operation was cancelled).
    public final func finish() {
        switch transition({ $0.finishAsynchronous() }) {
        case .success(let finish):
            performFinish(finish, releasesSlot: true)
        case .failure(let error):
            trap(error.misuse)
        }
    }
}
