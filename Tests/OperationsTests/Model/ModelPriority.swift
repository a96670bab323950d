import Operations

/// A queue priority in a model sequence (``Op/QueuePriority`` is not `Codable`).
enum ModelPriority: Int, Codable, Hashable, Sendable, CaseIterable, Comparable {
    case veryLow = -8, low = -4, normal = 0, high = 4, veryHigh = 8

    var library: Op.QueuePriority { Op.QueuePriority(rawValue: rawValue)! }

    static func < (lhs: ModelPriority, rhs: ModelPriority) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The priority a storm of changes alternates with, starting from `self`.
    var stormPartner: ModelPriority { self == .veryHigh ? .veryLow : .veryHigh }
}
