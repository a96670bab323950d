/// The observable properties of ``OpQueue``, as bit positions in an ``ObserverRegistry``.
enum QueueProperty: Int, CaseIterable {
    case operations
    case operationCount
    case maxConcurrentOperationCount
    case isSuspended
    case name
    /// Not a property: the queue started an operation (for ``OpQueue/events(bufferingPolicy:)``).
    case startedOperation
    /// Not a property: an operation left the queue (for ``OpQueue/events(bufferingPolicy:)``).
    case finishedOperation
}

/// Whether a queue transition recorded changes that must be delivered after unlocking.
struct QueueChanges {
    var recorded = false
}
