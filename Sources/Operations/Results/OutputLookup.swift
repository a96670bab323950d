/// What ``Op/value(as:)`` finds in a finished operation.
enum OutputLookup<Value> {
    /// The operation succeeded, with a value of the type asked for.
    case value(Value)
    /// The operation failed or was cancelled, with this error (see ``ProducesOutput/output``).
    case failure(any Error)
    /// The operation produces `produced` (`nil`: no output), not the type asked for.
    case mismatch(produced: Any.Type?)
}
