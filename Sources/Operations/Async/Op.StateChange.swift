extension Op {
    /// A change of an operation's state, as delivered by ``Op/changes``.
    public enum StateChange: Sendable, Hashable, CustomStringConvertible {
        /// The operation became ready: its dependencies finished (or it was cancelled).
        case ready
        /// The operation was cancelled.
        case cancelled
        /// The operation started executing.
        case executing
        /// The operation finished. It is the last change.
        case finished

        /// The name of the change.
        public var description: String {
            switch self {
            case .ready: "ready"
            case .cancelled: "cancelled"
            case .executing: "executing"
            case .finished: "finished"
            }
        }
    }

    /// The operation's state changes from now on, in order, as an asynchronous sequence that ends
    /// when the operation finishes.
    ///
    /// ```swift
    /// for await change in download.changes {
    ///     print(download, change)   // executing, then finished
    /// }
    /// ```
    ///
    /// Changes that happened before the sequence was created are not replayed; if the operation has
    /// already finished, the sequence is empty. An operation changes state only a few times, so
    /// every change is buffered until it is consumed: a slow consumer never holds the operation or
    /// its queue back.
    public var changes: AsyncStream<StateChange> {
        AsyncStream(bufferingPolicy: .unbounded) { continuation in
            let mapping: [(OpProperty, StateChange)] = [
                (.isReady, .ready), (.isCancelled, .cancelled), (.isExecuting, .executing), (.isFinished, .finished),
            ]
            let entries = mapping.map { property, change in
                ObserverRegistry.Entry(property: property.rawValue, options: [.new]) { _, record, isPrior in
                    guard !isPrior, record.newValue as? Bool == true else { return }
                    continuation.yield(change)
                    if change == .finished { continuation.finish() }
                }
            }
            // Registered under the operation's lock: the stream hears of the changes from now on.
            let registry = withState { machine in
                let registry = machine.ensureRegistry()
                for entry in entries { registry.add(entry) }
                return registry
            }
            continuation.onTermination = { _ in
                for entry in entries { registry.remove(entry) }
            }
            if isFinished {
                continuation.finish()
            }
        }
    }
}
