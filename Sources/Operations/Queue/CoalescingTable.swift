/// The operations of one queue added with a coalescing key (see
/// ``OpQueue/addOperation(_:coalescingKey:policy:)``), kept under the queue's lock: the newest
/// operation of each key, and the key of each such operation, until it leaves the queue.
///
/// - Complexity: O(1) per add and per departure; memory follows the keyed operations in the queue.
struct CoalescingTable {
    private var operationOfKey: [String: Op] = [:]
    private var keyOfOperation: [ObjectIdentifier: String] = [:]

    /// Whether no keyed operation is kept (the departures of other operations look no further).
    var isEmpty: Bool { keyOfOperation.isEmpty }

    /// The number of keys kept (for tests).
    var count: Int { operationOfKey.count }

    /// The operation kept for `key`, if any (it may have finished: see ``OpQueue``'s use).
    func operation(for key: String) -> Op? {
        operationOfKey[key]
    }

    /// `operation` is the newest of `key`.
    mutating func record(_ operation: Op, for key: String) {
        if let old = operationOfKey.updateValue(operation, forKey: key) {
            keyOfOperation[ObjectIdentifier(old)] = nil
        }
        keyOfOperation[ObjectIdentifier(operation)] = key
    }

    /// `operation` left the queue: its key is free, unless a newer operation holds it.
    mutating func remove(_ operation: Op) {
        guard let key = keyOfOperation.removeValue(forKey: ObjectIdentifier(operation)) else { return }
        if operationOfKey[key] === operation { operationOfKey[key] = nil }
        if keyOfOperation.isEmpty {
            // Gives back the storage of a burst of keys.
            operationOfKey = [:]
            keyOfOperation = [:]
        }
    }
}
