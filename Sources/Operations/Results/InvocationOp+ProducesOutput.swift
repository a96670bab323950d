extension InvocationOp: ProducesOutput {
    /// What the method returned, or the error it threw (or the cancellation); `nil` until the
    /// operation finishes (see ``ProducesOutput/output``). ``result`` reads the same outcome
    /// with ``InvocationOpError``s.
    public var output: Swift.Result<Result, any Error>? {
        finishedOutput {
            if case .success(let value)? = outcome { return value }
            return nil
        }
    }
}
