extension ProducesOutput {
    /// An operation that transforms this operation's value: a ``ResultOp`` that depends on this
    /// operation and runs `transform` on its value once it has finished.
    ///
    /// ```swift
    /// let fetch = AsyncBlockOp { try await client.download(url) }
    /// let size = fetch.map { data in data.count }
    /// queue.addOperations([fetch, size], waitUntilFinished: false)
    /// ```
    ///
    /// If this operation failed or was cancelled, `transform` is not called and the new
    /// operation's output is the same failure (its ``Op/error`` is that error). Add the new
    /// operation to a queue yourself, as with any operation.
    public func map<Transformed: Sendable>(
        _ transform: @escaping @Sendable (Output) throws -> Transformed
    ) -> ResultOp<Transformed> {
        let mapped = ResultOp { [self] in
            try transform(try outputOfFinishedProducer(madeBy: "map(_:)").get())
        }
        mapped.addDependency(self)
        return mapped
    }

    /// An operation that transforms this operation's value with `async` code: an
    /// ``AsyncBlockOp`` that depends on this operation and runs `transform` on its value once it
    /// has finished. See ``map(_:)->ResultOp<Transformed>``.
    public func map<Transformed: Sendable>(
        _ transform: @escaping @Sendable (Output) async throws -> Transformed
    ) -> AsyncBlockOp<Transformed> {
        let mapped = AsyncBlockOp { [self] in
            try await transform(try outputOfFinishedProducer(madeBy: "map(_:)").get())
        }
        mapped.addDependency(self)
        return mapped
    }

    /// The output of this operation, which an operation made from it (by `function`) depends on.
    func outputOfFinishedProducer(madeBy function: String) -> Result<Output, any Error> {
        guard let output else {
            misuse("An operation made by \(function) ran before \(self), whose output it uses, had finished: it is no longer a dependency. Keep the producer a dependency of the operation made from it.")
        }
        return output
    }
}
