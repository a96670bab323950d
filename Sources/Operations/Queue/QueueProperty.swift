/// The observable properties of ``OpQueue``, as bit positions in an ``ObserverRegistry``.
enum QueueProperty: Int, CaseIterable {
    case operations
    case operationCount
    case maxConcurrentOperationCount
    case isSuspended
    case name
}

/// Whether a queue transition recorded changes that must be delivered after unlocking.
struct QueueChanges {
    var recorded = false
}
