#if Tracing
import Tracing

/// The ``OpInstrument`` behind ``OpTracing``: remembers the context where each operation was
/// enqueued, starts its span when it starts, and ends the span when it finishes.
///
/// Installed from the start when the `Tracing` trait is enabled (see ``Instruments``). An
/// operation that is enqueued but never starts or finishes (it is released with its queue's
/// never-run graph) leaves its context here.
final class DistributedTracingInstrument: OpInstrument, Sendable {
    static let shared = DistributedTracingInstrument()

    /// What is known of an operation between its enqueueing and its finish.
    private struct Entry {
        var context: ServiceContext?
        var span: (any Span)?
    }

    /// By the operations' serial numbers.
    private let entries = LockedBox<[UInt64: Entry]>([:])
    /// ``OpTracing/tracer``.
    let configuredTracer = LockedBox<(any Tracer)?>(nil)
    private let installed = LockedBox(true)

    private init() {}

    var isInstalled: Bool { installed.withLockedValue { $0 } }

    func setInstalled(_ newValue: Bool) {
        let changes = installed.withLockedValue { installed in
            defer { installed = newValue }
            return installed != newValue
        }
        guard changes else { return }
        if newValue { Instruments.install(self) } else { Instruments.remove(self) }
    }

    private var tracer: any Tracer {
        configuredTracer.withLockedValue { $0 } ?? InstrumentationSystem.tracer
    }

    // MARK: OpInstrument

    func operationsEnqueued(_ operations: [Op], in queue: OpQueue, at time: UInt64) {
        guard let context = ServiceContext.current else { return }
        entries.withLockedValue { entries in
            for operation in operations {
                entries[operation.serial, default: Entry()].context = context
            }
        }
    }

    func operationStarted(_ operation: Op, at time: UInt64, thread: Int) {
        let (group, queue) = operation.withState { ($0.group, $0.queue) }
        let span = startSpan(for: operation, group: group, queue: queue)
        entries.withLockedValue { $0[operation.serial, default: Entry()].span = span }
    }

    func operationFinished(_ operation: Op, _ finish: InstrumentedFinish) {
        let entry = entries.withLockedValue { $0.removeValue(forKey: finish.serial) }
        let span: any Span
        if let started = entry?.span {
            span = started
        } else {
            // Cancelled before it started (or started before tracing was enabled).
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
        let (groupSpan, enqueuedContext) = entries.withLockedValue { entries in
            (group.flatMap { entries[$0.serial]?.span }, context ?? entries[operation.serial]?.context)
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
