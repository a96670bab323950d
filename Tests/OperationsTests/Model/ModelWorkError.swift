/// The errors that model operations fail with.
enum ModelWorkError: Error, Equatable {
    /// Thrown by an `AsyncOp` body (``ModelOpKind/asyncThrowing``) or an `async` condition.
    case thrown
    /// Passed to `cancel(with:)`.
    case cancelled
}
