/// A group that runs one operation per element of another operation's array output, and produces
/// their outputs in the order of the elements (see ``ProducesOutput/mapEach(_:)``).
///
/// ```swift
/// let list = AsyncBlockOp { try await api.photoIDs() }                  // [PhotoID]
/// let thumbnails = list.mapEach { id in AsyncBlockOp { try await api.thumbnail(id) } }
/// queue.addOperations([list, thumbnails], waitUntilFinished: false)
/// let images = try await thumbnails.value                               // [Image], in order
/// ```
///
/// It depends on the producer. When it starts, it makes one operation per element with
/// `makeOperation`, and runs them as its children (as many at once as
/// ``GroupOp/maxConcurrentOperationCount`` allows). If the producer failed or was cancelled, it
/// makes none and fails with the producer's failure (a cancellation without an error is
/// `CancellationError()`); if a child fails, its output is the failure of the first child, in
/// the order of the elements, that did not succeed. An empty array produces an empty array.
public final class EachOp<Element: Sendable, Output: Sendable>: GroupOp, ProducesOutput, @unchecked Sendable {
    // @unchecked Sendable: `makeChildren` is immutable and `Sendable`; `made` is a locked box.

    /// Makes the children from the producer's output (or returns its failure).
    private let makeChildren: @Sendable () -> Result<[Op], any Error>
    /// Reads the output of a child that `makeOperation` made.
    private let childOutput: @Sendable (Op) -> Result<Output, any Error>?
    /// The children made, in the order of the elements, or the producer's failure.
    private let made = LockedBox<Result<[Op], any Error>?>(nil)

    init<Producer: ProducesOutput, Made: ProducesOutput>(
        over producer: Producer, _ makeOperation: @escaping @Sendable (Element) -> Made
    ) where Producer.Output == [Element], Made.Output == Output {
        makeChildren = {
            guard let output = producer.output else {
                misuse("The operation made by mapEach(_:) from \(producer) started before it had finished: it is no longer a dependency. Keep the producer a dependency of the operation made from it.")
            }
            return output.map { elements in elements.map { makeOperation($0) } }
        }
        childOutput = { child in (child as? Made)?.output }
        super.init()
        addDependency(producer)
    }

    /// Makes the children from the producer's output and runs them; fails at once with the
    /// producer's failure.
    public override func execute() {
        let children = isCancelled ? .success([]) : makeChildren()
        made.withLockedValue { $0 = children }
        if case .success(let operations) = children {
            addChildren(operations)
        }
        // Without children (a failed producer, or a cancellation), it finishes at once, with the
        // producer's failure as its error (see `failure(fromChildErrors:droppedErrorCount:)`).
        super.execute()
    }

    /// The group's error: the producer's failure, or a ``GroupError`` of its children's.
    override func failure(fromChildErrors errors: [any Error], droppedErrorCount: Int) -> (any Error)? {
        if case .failure(let error)? = made.withLockedValue({ $0 }) { return error }
        return super.failure(fromChildErrors: errors, droppedErrorCount: droppedErrorCount)
    }

    /// The outputs of the children, in the order of the elements, or the first failure; `nil`
    /// until the operation finishes.
    public var output: Result<[Output], any Error>? {
        guard isFinished else { return nil }
        if let failure = finishedFailure, !(failure is GroupError) { return .failure(failure) }
        switch made.withLockedValue({ $0 }) {
        case .failure(let error)?:
            return .failure(error)
        case .success(let children)?:
            var outputs: [Output] = []
            outputs.reserveCapacity(children.count)
            for child in children {
                switch childOutput(child) {
                case .success(let value)?: outputs.append(value)
                case .failure(let error)?: return .failure(error)
                case nil: return .failure(CancellationError())
                }
            }
            return .success(outputs)
        case nil:
            return .failure(finishedFailure ?? CancellationError())
        }
    }
}

extension ProducesOutput {
    /// An operation that runs one operation per element of this operation's array output, made
    /// by `makeOperation`, and produces their outputs in the order of the elements: an
    /// ``EachOp`` (a group) that depends on this operation.
    ///
    /// ```swift
    /// let pages = site.mapEach { url in AsyncBlockOp { try await fetch(url) } }
    /// ```
    public func mapEach<Element: Sendable, Made: ProducesOutput>(
        _ makeOperation: @escaping @Sendable (Element) -> Made
    ) -> EachOp<Element, Made.Output> where Output == [Element] {
        EachOp(over: self, makeOperation)
    }
}
