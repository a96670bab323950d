extension QueueDump {
    /// Names the operations of a dump, and the state and place of those it mentions, each once.
    ///
    /// Used with no lock of the library held: it takes one operation's lock at a time to read its
    /// state, another queue's lock to read that queue's description, and calls `description`,
    /// which a subclass may override.
    final class Namer {
        /// The queue being dumped: its members need no place.
        private let queue: OpQueue
        private var labels: [ObjectIdentifier: String] = [:]
        private var states: [ObjectIdentifier: (state: String, place: String?)] = [:]

        init(dumping queue: OpQueue) {
            self.queue = queue
        }

        /// Records a member's state as the dump found it, so that every mention of it agrees
        /// with its own line.
        func note(member: Op, state: Line.State) {
            states[ObjectIdentifier(member)] = (state.rawValue, nil)
        }

        /// The operation's description, on one line.
        func label(_ operation: Op) -> String {
            let id = ObjectIdentifier(operation)
            if let label = labels[id] { return label }
            let label = QueueDump.oneLine(operation.description)
            labels[id] = label
            return label
        }

        /// The operation with its state and, if it is not in the dumped queue, where it is.
        func related(_ operation: Op) -> Related {
            let id = ObjectIdentifier(operation)
            if let known = states[id] {
                return Related(operation: label(operation), state: known.state, place: known.place)
            }
            let (lifecycle, isCancelled, isReady, operationQueue, group) = operation.withState {
                ($0.lifecycle, $0.isCancelled, $0.isReady, $0.queue, $0.group)
            }
            let state: String
            switch lifecycle {
            case .pending: state = isCancelled ? "cancelled" : isReady ? "ready" : "waiting"
            case .executing: state = "executing"
            case .finishing: state = "finishing"
            case .finished: state = "finished"
            }
            let place: String?
            if let operationQueue, operationQueue === queue {
                place = nil
            } else if let group {
                place = "child of \(label(group))"
            } else if let operationQueue {
                place = "in \(QueueDump.oneLine(operationQueue.description))"
            } else {
                place = lifecycle == .pending ? "in no queue" : nil
            }
            states[id] = (state, place)
            return Related(operation: label(operation), state: state, place: place)
        }
    }
}
