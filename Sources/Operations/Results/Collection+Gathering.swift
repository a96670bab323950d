// Producers over collections: the outputs of many operations as one value.

extension Collection where Element: ProducesOutput {
    /// An operation that gathers the outputs of these operations into one array, in their order:
    /// a ``ResultOp`` that depends on each of them and runs once they have all finished.
    ///
    /// ```swift
    /// let fetches = urls.map { url in AsyncBlockOp { try await client.download(url) } }
    /// let all = fetches.gathered()                 // ResultOp<[Data]>
    /// (fetches + [all]).enqueue(on: queue)
    /// let pages = try await all.value
    /// ```
    ///
    /// If one of them failed or was cancelled, the first in the collection's order that did
    /// decides: the gathered operation fails with its error (``ProducesOutput/output``'s rule:
    /// `CancellationError()` for a cancellation without an error), as a mapped operation does.
    /// Add the operations and the gathered one to a queue yourself.
    public func gathered() -> ResultOp<[Element.Output]> {
        let producers = Array(self)
        let gathered = ResultOp<[Element.Output]> {
            try producers.map { try $0.outputOfFinishedProducer(madeBy: "gathered()").get() }
        }
        for producer in producers { gathered.addDependency(producer) }
        return gathered
    }

    /// An operation that combines the outputs of these operations, in their order, starting
    /// from `initial`: a ``ResultOp`` that depends on each of them (see ``gathered()``; a failure
    /// is handled the same way, and `combine` is not called).
    ///
    /// ```swift
    /// let sizes = files.map { file in ResultOp { try file.size() } }
    /// let total = sizes.reduced(0, +)              // ResultOp<Int>
    /// ```
    public func reduced<Result: Sendable>(
        _ initial: Result, _ combine: @escaping @Sendable (Result, Element.Output) throws -> Result
    ) -> ResultOp<Result> {
        let producers = Array(self)
        let reduced = ResultOp<Result> {
            var result = initial
            for producer in producers {
                result = try combine(result, try producer.outputOfFinishedProducer(madeBy: "reduced(_:_:)").get())
            }
            return result
        }
        for producer in producers { reduced.addDependency(producer) }
        return reduced
    }
}
