/// A sequence that the library did not play the way the model allows.
struct ModelFailure: Codable, Hashable, Sendable, CustomStringConvertible {
    /// What kind of rule was broken; the shrinker keeps a shorter sequence only if it breaks a
    /// rule of the same kind.
    enum Category: String, Codable, Hashable, Sendable {
        /// The process stopped (a trap in the library).
        case crash
        /// Something did not finish, or a call did not return.
        case hang
        /// An operation ran, was cancelled, or failed other than the model says.
        case outcome
        /// A body started before one of its dependencies had finished.
        case dependencyOrder
        /// `dependencies` read in a body differs from the model's.
        case dependencyList
        /// A queue of width 1 started its operations in an order the rules do not allow.
        case startOrder
        /// Operations of one exclusivity category overlapped.
        case exclusivity
        /// A queue ran more operations at once than its width.
        case width
        /// A group finished before one of its children, or ran a child inside `execute()`.
        case group
        /// Observer callbacks or observed changes not once each, in order.
        case observers
        /// A body ran inside a Swift task (on the cooperative pool) instead of the queue's threads.
        case thread
        /// A wait in a callback did not return, or a body action could not be done.
        case callbacks
    }

    var category: Category
    /// Every broken rule, one line each (the first decides the category).
    var details: [String]

    var description: String {
        "\(category.rawValue): " + details.prefix(12).joined(separator: "\n  ")
            + (details.count > 12 ? "\n  (\(details.count - 12) more)" : "")
    }
}
