extension AsyncBlockOp: ProducesOutput {
    /// The value the closure returned, or the error; `nil` until the operation finishes. A
    /// cancelled operation's output is the failure, even if the closure returned a value (see
    /// ``ProducesOutput/output``). ``value`` awaits the same outcome.
    public var output: Result<Success, any Error>? {
        finishedOutput { keptValue }
    }
}
