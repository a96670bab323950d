/// What ``ModelOrderCheck`` needs to tell which start orders a queue of width 1 allows in one
/// run phase: the ready list when the phase began and what each member does when it starts.
struct ModelOrderSnapshot: Sendable {
    /// One operation of the queue.
    struct Member: Sendable {
        var priority: ModelPriority
        /// Its dependencies in the queue that had not finished when the phase began.
        var deps: [Int]
        /// Whether its body runs when it is started (otherwise it finishes without running).
        var runs: Bool
        /// What its body does to operations of the queue, in the order it does it: which it
        /// cancels and which it adds (a cancellation lists a waiting operation at once, so its
        /// place among the additions decides the order of the ready list).
        var effects: [Effect]
        /// Whether it is in the queue when the phase begins (or is added by a body).
        var inQueueAtStart: Bool
        /// Whether it was cancelled when the phase began: it is ready whatever its dependencies.
        var isCancelledAtStart = false
    }

    /// A body's action on an operation of the queue.
    enum Effect: Sendable, Equatable {
        case cancels(Int)
        case adds(Int)
    }

    var queue: Int
    var phase: Int
    var entries: [ReferenceModel.QueueState.Entry]
    var members: [Int: Member]
    /// Whether the model can tell the order at all (see ``ReferenceModel/QueueState/orderUnknown``).
    var isDeterminate: Bool
}
