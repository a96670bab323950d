import Operations

/// A callback-style ``AsyncOp``: ``AsyncOp/execute()-3w8hx`` starts work that ends in a
/// callback, and that callback finishes the operation.
///
/// The operation is given the code that starts the work, and passes it a `finish` closure for
/// the callback to call, once:
///
/// ```swift
/// let request = CallbackOp { finish in
///     client.fetch(url) { _ in finish() }
/// }
/// ```
///
/// It is executing, and holds its slot of the queue, from the start until `finish` is called.
/// (An `AsyncOp` with an `async` closure that awaits the callback would do as well.)
final class CallbackOp: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: `AsyncOp` is an open class marked `@unchecked Sendable`; this
    // subclass adds only a constant.
    private let startWork: @Sendable (_ finish: @escaping @Sendable () -> Void) -> Void

    /// An operation that calls `start` when it starts; the work it starts must call `finish`
    /// exactly once, when it is done.
    init(start: @escaping @Sendable (_ finish: @escaping @Sendable () -> Void) -> Void) {
        self.startWork = start
        super.init()
    }

    /// Starts the work, handing it ``AsyncOp/finish()`` to call from its callback.
    override func execute() {
        startWork { self.finish() }
    }
}
