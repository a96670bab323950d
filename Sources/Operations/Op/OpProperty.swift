/// The observable properties of ``Op``, as bit positions in an ``ObserverRegistry``.
enum OpProperty: Int, CaseIterable {
    case isCancelled
    case isAsynchronous
    case isExecuting
    case isFinished
    case isReady
    case dependencies
    case queuePriority
    case completionBlock
    case error
}
