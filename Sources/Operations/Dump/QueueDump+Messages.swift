// The dump lines that diagnostics and traps append: a stalled queue's cycle, a wait that could
// never return. Short, so that a message about a queue of a hundred thousand operations stays
// readable.

extension QueueDump {
    /// The most member lines a message shows for one queue.
    static let messageLineLimit = 20

    /// The dumps of the queues that hold some of `operations`, each showing only those
    /// operations (at most ``messageLineLimit`` of them), one queue after another; `nil` if none
    /// of them is in a queue. Call with no lock of the library held.
    static func section(for operations: [Op]) -> String? {
        var queues: [OpQueue] = []
        var shown: [ObjectIdentifier: Set<ObjectIdentifier>] = [:]
        for operation in operations {
            guard let queue = operation.withState({ $0.queue }) else { continue }
            let id = ObjectIdentifier(queue)
            if shown[id] == nil { queues.append(queue) }
            shown[id, default: []].insert(ObjectIdentifier(operation))
        }
        guard !queues.isEmpty else { return nil }
        return queues.map { queue in
            take(of: queue, only: shown[ObjectIdentifier(queue)], limit: messageLineLimit).text
        }.joined(separator: "\n")
    }

    /// The dump of `queue`, showing at most ``messageLineLimit`` members. Call with no lock of
    /// the library held.
    static func section(of queue: OpQueue) -> String {
        take(of: queue, limit: messageLineLimit).text
    }

    /// A line break and ``section(for:)``, to end a message with; empty if none of `operations`
    /// is in a queue.
    static func appendix(for operations: [Op]) -> String {
        section(for: operations).map { "\n" + $0 } ?? ""
    }

    /// A line break and ``section(of:)``, to end a message with.
    static func appendix(of queue: OpQueue) -> String {
        "\n" + section(of: queue)
    }
}
