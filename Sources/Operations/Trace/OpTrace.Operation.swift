extension OpTrace {
    /// One operation as a trace recorded it.
    ///
    /// Times are offsets from the start of the recording. A time is `nil` when the event did
    /// not happen while recording: an operation enqueued before the recording started has no
    /// ``enqueuedAt``, one cancelled before it started, or that started before the recording did
    /// (``startedBeforeRecording``), has no ``startedAt``, and one that was still running when
    /// the recording stopped has no ``finishedAt``.
    public struct Operation: Sendable, Identifiable {
        /// A number that tells operations apart within the process (their order of creation).
        public let id: UInt64
        /// The operation's ``Op/name`` when it finished.
        public internal(set) var name: String?
        /// The operation's class, such as `BlockOp` (empty if it did not finish while recording).
        public internal(set) var typeName = ""
        /// The name of the queue it was added to (`nil` for a group's child, or an operation
        /// started by hand).
        public internal(set) var queueName: String?
        /// The ``id`` of the group it is a child of.
        public internal(set) var groupID: UInt64?
        /// The name of the group it is a child of.
        public internal(set) var groupName: String?
        /// The ``id``s of its dependencies (some may not be in the trace).
        public internal(set) var dependencyIDs: [UInt64] = []
        /// When it entered its queue.
        public internal(set) var enqueuedAt: Duration?
        /// When it started executing.
        public internal(set) var startedAt: Duration?
        /// When it finished.
        public internal(set) var finishedAt: Duration?
        /// The number of the thread it started on (see ``OpTrace/threadNames``).
        public internal(set) var thread: Int?
        /// The number of the thread it finished on: for an asynchronous operation, often not the
        /// one it started on.
        public internal(set) var finishThread: Int?
        /// How it ended.
        public internal(set) var outcome = Outcome.unfinished
        /// Its ``Op/error`` when it finished.
        public internal(set) var error: (any Error)?
        /// Whether it was already executing when the recording started (it has no ``startedAt``,
        /// but its body ran).
        public internal(set) var startedBeforeRecording = false
        /// Whether it is asynchronous (an ``AsyncOp`` or a ``GroupOp``): it stays executing
        /// after its body returns.
        public internal(set) var isAsynchronous = false

        init(id: UInt64) {
            self.id = id
        }

        /// Its name, or else its class and ``id``: a label for pictures and summaries.
        public var label: String {
            name ?? "\(typeName.isEmpty ? "operation" : typeName) #\(id)"
        }

        /// How long it executed, if it started and finished while recording.
        public var runningTime: Duration? {
            guard let startedAt, let finishedAt else { return nil }
            return finishedAt - startedAt
        }

        mutating func record(_ finish: InstrumentedFinish, at time: Duration, typeName: String, queueName: String?) {
            finishedAt = time
            finishThread = finish.thread.number
            name = finish.name
            self.typeName = typeName
            if self.queueName == nil { self.queueName = queueName }
            groupID = finish.group?.serial
            groupName = finish.group?.name
            dependencyIDs = finish.dependencies
            error = finish.error
            isAsynchronous = finish.isAsynchronous
            startedBeforeRecording = finish.hasExecuted && startedAt == nil
            outcome = finish.isCancelled ? .cancelled : (finish.error == nil ? .succeeded : .failed)
        }
    }

    /// How a recorded operation ended.
    public enum Outcome: Sendable, Hashable {
        /// It finished without an error and was not cancelled.
        case succeeded
        /// It finished with an error (``Operation/error``).
        case failed
        /// It was cancelled (before or while it executed; its ``Operation/error`` may say why).
        case cancelled
        /// It had not finished when the recording stopped.
        case unfinished

        /// The outcome in one word, as traces and summaries write it.
        var word: String {
            switch self {
            case .succeeded: "succeeded"
            case .failed: "failed"
            case .cancelled: "cancelled"
            case .unfinished: "unfinished"
            }
        }
    }
}
