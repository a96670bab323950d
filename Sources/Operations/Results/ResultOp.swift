/// A synchronous operation that runs a closure and keeps what it returns (or the error it
/// throws) as its ``output``.
///
/// ```swift
/// let parse = ResultOp { try Feed(parsing: data) }
/// queue.addOperation(parse)
/// parse.waitUntilFinished()
/// let feed = try parse.output?.get()
/// ```
///
/// From `async` code, `let feed = try await parse.value` waits without blocking a thread (see
/// ``ProducesOutput/value``).
///
/// A thrown error is also the operation's ``Op/error``, so conditions such as
/// ``OpCondition/noFailedDependencies`` and a ``GroupOp`` see it. Pass the value on with
/// ``Op/inject(from:_:)`` or ``ProducesOutput/map(_:)->ResultOp<Transformed>``. For `async` work, use
/// ``AsyncBlockOp``.
public final class ResultOp<Output: Sendable>: Op, ProducesOutput, @unchecked Sendable {
    // @unchecked Sendable: `work` and `keptValue` are guarded by the operation's stripe lock.
    private var work: (@Sendable () throws -> Output)?
    private var keptValue: Output?

    /// Creates an operation that runs `work` and keeps its value.
    public init(_ work: @escaping @Sendable () throws -> Output) {
        self.work = work
        super.init()
    }

    /// Runs the closure once, keeping its value or recording its error (the closure is released
    /// afterwards, with what it captured).
    public override func main() {
        guard let work = withState({ _ in self.work.take() }) else { return }
        do {
            let produced = try work()
            withState { _ in keptValue = produced }
        } catch {
            recordFailure(error)
        }
    }

    /// The value, or the error; `nil` until the operation finishes (see
    /// ``ProducesOutput/output``).
    public var output: Result<Output, any Error>? {
        finishedOutput { keptValue }
    }
}
