#if Tracing
import Tracing

/// The ``OpInstrument`` behind ``OpTracing``: remembers the context where each operation was
/// enqueued, starts its span when it starts, and ends the span when it finishes.
///
/// Installed from the start when the `Tracing` trait is enabled (see ``Instruments``). An
/// operation that is enqueued but never starts or finishes (it is released with its queue's
/// never-run graph) leaves its context here. With the trait on, every operation's enqueue, start
/// and finish also take this instrument's lock, even while the tracer is a no-op.
final class DistributedTracingInstrument: OpInstrument, Sendable {
    static let shared = DistributedTracingInstrument()

    /// What is known of an operation between its enqueueing and its finish.
    private struct Entry {
        var context: ServiceContext?
        var span: (any Span)?
    }

    /// What the instrument holds: the entries by the operations' serial numbers, and whether it
    /// is installed (it takes new spans only then; removing it ends the spans it held).
    private struct Spans {
        var isInstalled = true
        var entries: [UInt64: Entry] = [:]
    }

    private let spans = LockedBox(Spans())
    /// ``OpTracing/tracer``.
    let configuredTracer = LockedBox<(any Tracer)?>(nil)

    private init() {}

    var isInstalled: Bool { spans.withLockedValue { $0.isInstalled } }

    /// Installs or removes the instrument. Removing it ends the spans still open (their
    /// operations' finish will not be heard), with the outcome `unfinished`.
    func setInstalled(_ newValue: Bool) {
        let open: [any Span] = spans.withLockedValue { spans in
            guard spans.isInstalled != newValue else { return [] }
            spans.isInstalled = newValue
            // Under this lock, so that concurrent changes apply in order (Instruments' lock is
            // taken inside it, and calls out to nothing).
            if newValue {
                Instruments.install(self)
                return []
            }
            Instruments.remove(self)
            // An operation heard starting before the removal may store its span after it: it
            // finds the instrument removed under this lock, and ends the span itself.
            defer { spans.entries = [:] }
            return spans.entries.values.compactMap(\.span)
        }
        endUnfinished(open)
    }

    /// Ends `open`, spans of operations whose finish will not be heard.
    private func endUnfinished(_ open: [any Span]) {
        for span in open {
            span.attributes["operations.outcome"] = "unfinished"
            span.end()
        }
    }

    /// Runs `body`, the body of `operation`, with its span's context as the current
    /// `ServiceContext`.
    func runBody(of operation: Op, _ body: () -> Void) {
        guard Instruments.isActive, let span = spans.withLockedValue({ $0.entries[operation.serial]?.span }) else {
            body()
            return
        }
        ServiceContext.withValue(span.context) { body() }
    }

    private var tracer: any Tracer {
        configuredTracer.withLockedValue { $0 } ?? InstrumentationSystem.tracer
    }

    // MARK: OpInstrument

    func operationsEnqueued(_ operations: [Op], in queue: OpQueue, at time: UInt64) {
        guard let context = ServiceContext.current else { return }
        spans.withLockedValue { spans in
            guard spans.isInstalled else { return }
            for operation in operations {
                spans.entries[operation.serial, default: Entry()].context = context
            }
        }
    }

    func operationStarted(_ operation: Op, at time: UInt64, thread: TraceThread) {
        let (group, queue) = operation.withState { ($0.group, $0.queue) }
        let span = startSpan(for: operation, group: group, queue: queue)
        let isKept = spans.withLockedValue { spans in
            guard spans.isInstalled else { return false }
            spans.entries[operation.serial, default: Entry()].span = span
            return true
        }
        // Removed while the span started: nothing will end it but this.
        if !isKept { endUnfinished([span]) }
    }

    func operationFinished(_ operation: Op, _ finish: InstrumentedFinish) {
        let entry = spans.withLockedValue { $0.entries.removeValue(forKey: finish.serial) }
        let span: any Span
        if let started = entry?.span {
            span = started
        } else {
            // It started while tracing was off (its span, if any, was ended then): no span.
            guard !finish.hasExecuted else { return }
            // Cancelled before it started: an empty span where it finished.
            let (group, queue) = operation.withState { ($0.group, $0.queue) }
            span = startSpan(for: operation, group: group, queue: queue, context: entry?.context)
        }
        let outcome = finish.isCancelled ? "cancelled" : finish.error == nil ? "succeeded" : "failed"
        span.attributes["operations.outcome"] = outcome
        if let error = finish.error {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error, message: "\(error)"))
        }
        span.end()
    }

    /// Starts the span of `operation`, under its group's span, or else under the context where
    /// it was enqueued, or else under the current one.
    private func startSpan(for operation: Op, group: GroupOp?, queue: OpQueue?, context: ServiceContext? = nil) -> any Span {
        let (groupSpan, enqueuedContext) = spans.withLockedValue { spans in
            (group.flatMap { spans.entries[$0.serial]?.span }, context ?? spans.entries[operation.serial]?.context)
        }
        // Read outside the lock: a span is the tracer's code.
        let parent = groupSpan?.context ?? enqueuedContext ?? ServiceContext.current ?? .topLevel
        let typeName = String(describing: type(of: operation))
        let span = tracer.startSpan(operation.name ?? typeName, context: parent, ofKind: .internal)
        span.attributes["operations.type"] = typeName
        if let queue, !queue.isGroupQueue, let name = queue.name {
            span.attributes["operations.queue"] = name
        }
        if let group {
            span.attributes["operations.group"] = group.name ?? String(describing: type(of: group))
        }
        return span
    }
}
#endif
