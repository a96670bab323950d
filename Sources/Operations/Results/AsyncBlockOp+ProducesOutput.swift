extension AsyncBlockOp: ProducesOutput {
    /// The value the closure returned, or the error; `nil` until the operation finishes (see
    /// ``ProducesOutput/output``). ``value`` awaits the same outcome.
    public var output: Result<Success, any Error>? {
        finishedOutput { keptValue }
    }
}
