extension OpQueue {
    /// Something that happened in a queue, as delivered by ``OpQueue/events(bufferingPolicy:)``.
    public enum Event: Sendable, CustomStringConvertible {
        /// The queue started an operation (it runs now, or finishes at once if it was cancelled).
        case started(Op)
        /// An operation finished, its completion block returned, and it left the queue.
        case finished(Op)
        /// The number of operations in the queue changed.
        case operationCountChanged(Int)

        /// A short description of the event.
        public var description: String {
            switch self {
            case .started(let operation): "started \(operation)"
            case .finished(let operation): "finished \(operation)"
            case .operationCountChanged(let count): "operationCount \(count)"
            }
        }
    }

    /// The queue's events from now on, in the order they happened, as an asynchronous sequence.
    ///
    /// ```swift
    /// for await event in queue.events() {
    ///     if case .operationCountChanged(0) = event { print("idle") }
    /// }
    /// ```
    ///
    /// The sequence never ends by itself (a queue can always get more work); stop iterating, or
    /// cancel the iterating task, when you are done. Events are produced on the threads that run the
    /// queue and never wait for the consumer: they are buffered according to `bufferingPolicy`.
    /// The default keeps every event, which suits a consumer that keeps up; for a queue that runs
    /// millions of operations and a consumer that samples, pass `.bufferingNewest(n)`, which keeps
    /// only the latest `n` unread events.
    public func events(
        bufferingPolicy: AsyncStream<Event>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Event> {
        AsyncStream(bufferingPolicy: bufferingPolicy) { continuation in
            let registry = self.registry
            let entries = [
                ObserverRegistry.Entry(property: QueueProperty.startedOperation.rawValue, options: [.new]) { _, record, isPrior in
                    if !isPrior, let operation = record.newValue as? Op { continuation.yield(.started(operation)) }
                },
                ObserverRegistry.Entry(property: QueueProperty.finishedOperation.rawValue, options: [.new]) { _, record, isPrior in
                    if !isPrior, let operation = record.newValue as? Op { continuation.yield(.finished(operation)) }
                },
                ObserverRegistry.Entry(property: QueueProperty.operationCount.rawValue, options: [.new]) { _, record, isPrior in
                    if !isPrior, let count = record.newValue as? Int { continuation.yield(.operationCountChanged(count)) }
                },
            ]
            for entry in entries { register(entry) }
            continuation.onTermination = { _ in
                for entry in entries { registry.remove(entry) }
            }
        }
    }
}
