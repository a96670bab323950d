extension OpTrace {
    /// The trace in Chrome's trace event format (JSON), for [Perfetto](https://ui.perfetto.dev)
    /// or `chrome://tracing`.
    ///
    /// Each thread is a track, and each operation a slice on the track of the thread it ran on,
    /// named by its ``Operation/label``, with its class, queue, group and outcome as arguments.
    /// Asynchronous operations (an ``AsyncOp``, a ``GroupOp``), which run past their body and
    /// finish elsewhere, are async slices on tracks of their own. Arrows lead from each
    /// dependency's end to the start of its dependent, where both are synchronous operations
    /// (an arrow binds to slices on thread tracks). An operation cancelled before it started is
    /// an instant event where it finished; one that started before the recording did is a slice
    /// from the recording's start.
    ///
    /// ```swift
    /// let trace = OpTrace.record { queue.addOperations(operations, waitUntilFinished: true) }
    /// try trace.chromeTraceJSON.write(toFile: "trace.json", atomically: true, encoding: .utf8)
    /// ```
    public var chromeTraceJSON: String {
        var json = ChromeTraceWriter()
        json.event(#""ph":"M","pid":1,"name":"process_name","args":{"name":"Operations"}"#)
        for (thread, name) in threadNames.sorted(by: { $0.key < $1.key }) {
            json.event { json in
                json.raw(#""ph":"M","pid":1,"tid":"#); json.integer(thread)
                json.raw(#","name":"thread_name","args":{"name":"#); json.string(name); json.raw("}")
            }
            json.event { json in
                json.raw(#""ph":"M","pid":1,"tid":"#); json.integer(thread)
                json.raw(#","name":"thread_sort_index","args":{"sort_index":"#); json.integer(thread); json.raw("}")
            }
        }
        for operation in operations {
            slices(of: operation, into: &json)
        }
        var flow = 0
        for dependent in operations {
            guard let startedAt = dependent.startedAt, let thread = dependent.thread, !dependent.isAsynchronous else { continue }
            for dependencyID in dependent.dependencyIDs {
                guard let position = index[dependencyID], !operations[position].isAsynchronous,
                      let finishedAt = operations[position].finishedAt,
                      let finishThread = operations[position].finishThread else { continue }
                flow += 1
                // Inside the slices they bind to: the dependency's last nanosecond, the
                // dependent's first.
                let from = max(operations[position].startedAt ?? finishedAt, finishedAt - .nanoseconds(1))
                for (phase, thread, time) in [("s", finishThread, from), ("f", thread, startedAt)] {
                    json.event { json in
                        json.raw(#""ph":""#); json.raw(phase)
                        json.raw(phase == "f" ? #"","bp":"e","pid":1,"tid":"# : #"","pid":1,"tid":"#); json.integer(thread)
                        json.raw(#","ts":"#); json.microseconds(time)
                        json.raw(#","id":"#); json.integer(flow)
                        json.raw(#","cat":"dependency","name":"dependency""#)
                    }
                }
            }
        }
        return json.finish()
    }

    /// Writes the events drawing one operation.
    private func slices(of operation: Operation, into json: inout ChromeTraceWriter) {
        func common(_ phase: String, thread: Int, time: Duration, category: String, _ json: inout ChromeTraceWriter) {
            json.raw(#""ph":""#); json.raw(phase)
            json.raw(#"","pid":1,"tid":"#); json.integer(thread)
            json.raw(#","ts":"#); json.microseconds(time)
            json.raw(#","name":"#); json.string(operation.label)
            json.raw(#","cat":""#); json.raw(category); json.raw("\"")
        }
        let startedAt = operation.startedAt ?? (operation.startedBeforeRecording ? .zero : nil)
        guard let startedAt, let thread = operation.thread ?? operation.finishThread else {
            guard let finishedAt = operation.finishedAt, let thread = operation.finishThread else { return }
            // Cancelled before it started: a mark where it finished.
            json.event { json in
                common("i", thread: thread, time: finishedAt, category: "operation", &json)
                json.raw(#","s":"t""#)
                arguments(of: operation, into: &json)
            }
            return
        }
        let end = operation.finishedAt ?? duration
        if operation.isAsynchronous {
            json.event { json in
                common("b", thread: thread, time: startedAt, category: "asynchronous operation", &json)
                json.raw(#","id":"op"#); json.integer(Int(operation.id)); json.raw("\"")
                arguments(of: operation, into: &json)
            }
            json.event { json in
                common("e", thread: operation.finishThread ?? thread, time: end, category: "asynchronous operation", &json)
                json.raw(#","id":"op"#); json.integer(Int(operation.id)); json.raw("\"")
            }
            return
        }
        json.event { json in
            common("X", thread: thread, time: startedAt, category: "operation", &json)
            json.raw(#","dur":"#); json.microseconds(end - startedAt)
            arguments(of: operation, into: &json)
        }
    }

    /// Writes an operation's details as the `args` of its slice.
    private func arguments(of operation: Operation, into json: inout ChromeTraceWriter) {
        json.raw(#","args":{"id":"#); json.integer(Int(operation.id))
        json.raw(#","type":"#); json.string(operation.typeName)
        json.raw(#","outcome":""#); json.raw(operation.outcome.word); json.raw("\"")
        if let queueName = operation.queueName { json.raw(#","queue":"#); json.string(queueName) }
        if let groupName = operation.groupName { json.raw(#","group":"#); json.string(groupName) }
        if let error = operation.error { json.raw(#","error":"#); json.string(String(describing: error)) }
        if let wait = waitingTimes(of: operation) {
            json.raw(#","waited for dependencies (µs)":"#); json.microseconds(wait.forDependencies)
            json.raw(#","waited to start (µs)":"#); json.microseconds(wait.toStart)
        }
        json.raw("}")
    }
}
