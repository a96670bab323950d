/// An operation that calls a method of an existing object and keeps what it returns, the Swift
/// counterpart of Foundation's `NSInvocationOperation`.
///
/// Swift has no selectors, so the operation is built from a target, one of its methods (an
/// unapplied method reference) and an argument:
///
/// ```swift
/// let resize = InvocationOp(target: model, invoking: Model.resize, with: image)
/// queue.addOperation(resize)
/// resize.waitUntilFinished()
/// let thumbnail = try resize.result
/// ```
///
/// Use it when a method that does the work exists already; no subclass is needed.
///
/// Reading ``result`` of an operation that was cancelled before it ran, that has not finished, or
/// whose method threw, throws an ``InvocationOpError`` instead of raising an exception.
open class InvocationOp<Result: Sendable>: Op, @unchecked Sendable {
    // @unchecked Sendable: `outcome` is guarded by the operation's stripe lock; `invocation` is
    // immutable.
    private let invocation: @Sendable () throws -> Result
    final var outcome: Swift.Result<Result, any Error>?

    /// Creates an operation that calls `method` on `target` with `argument`.
    ///
    /// - Parameters:
    ///   - target: The object whose method is called.
    ///   - method: An unapplied method reference, such as `Model.resize`.
    ///   - argument: The value passed to the method.
    public init<Target: Sendable, Argument: Sendable>(
        target: Target,
        invoking method: @escaping @Sendable (Target) -> @Sendable (Argument) throws -> Result,
        with argument: Argument
    ) {
        invocation = { try method(target)(argument) }
        super.init()
    }

    /// Creates an operation that calls the argument-less `method` on `target`.
    public init<Target: Sendable>(
        target: Target,
        invoking method: @escaping @Sendable (Target) -> @Sendable () throws -> Result
    ) {
        invocation = { try method(target)() }
        super.init()
    }

    /// Creates an operation that calls `invocation`, the counterpart of
    /// `NSInvocationOperation(invocation:)`.
    public init(invocation: @escaping @Sendable () throws -> Result) {
        self.invocation = invocation
        super.init()
    }

    /// Calls the method and stores its return value (or the error it threw, which is also the
    /// operation's ``Op/error``).
    open override func main() {
        let outcome = Swift.Result { try invocation() }
        withState { _ in self.outcome = outcome }
        if case .failure(let error) = outcome {
            recordFailure(error)
        }
    }

    /// What the method returned.
    ///
    /// - Throws: ``InvocationOpError/cancelled`` if the operation was cancelled (as Foundation
    ///   does, even if the method had already run),
    ///   ``InvocationOpError/notFinished`` if it has not finished yet, and
    ///   ``InvocationOpError/failed(_:)`` with the error the method threw.
    public final var result: Result {
        get throws(InvocationOpError) {
            let (outcome, finished, cancelled) = withState { machine in
                (self.outcome, machine.isFinished, machine.isCancelled)
            }
            guard finished else { throw .notFinished }
            if cancelled { throw .cancelled }
            switch outcome {
            case .success(let value)?:
                return value
            case .failure(let error)?:
                throw .failed(error)
            case nil:
                Operations.misuse("\(self) finished without calling its method: a subclass overrides main() without calling super.main(). Call super.main() from the override.")
            }
        }
    }
}
