/// A recording of what operations did: when each was enqueued, started and finished, on which
/// thread, in which queue and group, and how it ended.
///
/// Record a piece of code with ``record(_:)-(()->Void)``, or a stretch of a long-running program
/// with ``startRecording()`` and ``OpTraceRecording/stop()``:
///
/// ```swift
/// let trace = OpTrace.record {
///     queue.addOperations(operations, waitUntilFinished: true)
/// }
/// print(trace.summary)                       // critical path, longest operations, waiting
/// try trace.chromeTraceJSON.write(…)         // open in https://ui.perfetto.dev
/// ```
///
/// A recording sees every operation in the process that is enqueued, started or finished while
/// it records, not only those of the recorded code. When nothing records, operations pay one
/// relaxed atomic load as they start (and one per batch as they are enqueued); recording costs a
/// few microseconds per operation.
public struct OpTrace: Sendable {
    /// The recorded operations, in the order the recording first heard of them.
    public let operations: [Operation]

    /// How long the recording ran.
    public let duration: Duration

    /// The names of the threads that appear in the trace, by ``Operation/thread`` number.
    public let threadNames: [Int: String]

    /// Starts recording every operation in the process, until you stop the recording.
    ///
    /// - Returns: The recording; call ``OpTraceRecording/stop()`` on it to get the trace.
    public static func startRecording() -> OpTraceRecording {
        OpTraceRecording()
    }

    /// Records the operations that are enqueued, started or finished while `body` runs.
    ///
    /// `body` returns when it returns: wait inside it for the operations you want to see
    /// finished (for example with `addOperations(_:waitUntilFinished: true)` or
    /// ``OpQueue/waitUntilAllOperationsAreFinished()-2ptgv``); the others are recorded as unfinished.
    public static func record(_ body: () throws -> Void) rethrows -> OpTrace {
        let recording = startRecording()
        defer { recording.end() }   // also when `body` throws
        try body()
        return recording.stop()
    }

    /// Records the operations that are enqueued, started or finished while `body` runs.
    ///
    /// `body` returns when it returns: await inside it the operations you want to see finished
    /// (for example ``OpQueue/waitUntilAllOperationsAreFinished()-3sghu``); the others are recorded as unfinished.
    public static func record(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> Void
    ) async rethrows -> OpTrace {
        let recording = startRecording()
        defer { recording.end() }   // also when `body` throws
        try await body()
        return recording.stop()
    }

    /// The recorded operation with `id`, if the trace has it.
    public subscript(id id: Operation.ID) -> Operation? {
        index[id].map { operations[$0] }
    }

    /// The record of `operation`, if the trace has it.
    public subscript(operation: Op) -> Operation? {
        self[id: operation.serial]
    }

    /// The recorded operations whose ``Operation/name`` is `name`.
    public func operations(named name: String) -> [Operation] {
        operations.filter { $0.name == name }
    }

    /// The trace of only the operations that satisfy `isIncluded`, for example those of one
    /// queue, so that ``summary`` and ``chromeTraceJSON`` speak of them alone.
    public func filter(_ isIncluded: (Operation) throws -> Bool) rethrows -> OpTrace {
        OpTrace(operations: try operations.filter(isIncluded), duration: duration, threadNames: threadNames)
    }

    /// Positions in ``operations`` by id.
    let index: [Operation.ID: Int]

    init(operations: [Operation], duration: Duration, threadNames: [Int: String]) {
        self.operations = operations
        self.duration = duration
        self.threadNames = threadNames
        var index: [Operation.ID: Int] = [:]
        for (position, operation) in operations.enumerated() { index[operation.id] = position }
        self.index = index
    }

    /// Builds the trace from a recording's events; times become offsets from `startTime`.
    init(events: [OpTraceRecording.Event], threads: [Int: String], startTime: UInt64, stopTime: UInt64) {
        func offset(_ time: UInt64) -> Duration {
            .nanoseconds(Int64(clamping: time > startTime ? time - startTime : 0))
        }
        var operations: [Operation] = []
        var index: [UInt64: Int] = [:]
        func position(of id: UInt64) -> Int {
            if let position = index[id] { return position }
            index[id] = operations.count
            operations.append(Operation(id: id))
            return operations.count - 1
        }
        // Named once each: formatting a type's name is slow.
        var typeNames: [ObjectIdentifier: String] = [:]
        func name(of type: Op.Type) -> String {
            if let name = typeNames[ObjectIdentifier(type)] { return name }
            let name = String(describing: type)
            typeNames[ObjectIdentifier(type)] = name
            return name
        }
        for event in events {
            switch event {
            case .enqueued(let serial, let time, let queueName):
                let position = position(of: serial)
                operations[position].enqueuedAt = offset(time)
                operations[position].queueName = queueName
            case .started(let serial, let time, let thread):
                let position = position(of: serial)
                operations[position].startedAt = offset(time)
                operations[position].thread = thread
            case .finished(let finish, let queueName):
                operations[position(of: finish.serial)].record(
                    finish, at: offset(finish.time), typeName: name(of: finish.type), queueName: queueName)
            }
        }
        self.init(operations: operations, duration: offset(stopTime), threadNames: threads)
    }
}
