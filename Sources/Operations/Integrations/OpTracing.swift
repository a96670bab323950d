#if Tracing
public import Tracing

/// Distributed tracing of operations, with swift-distributed-tracing: each operation becomes a
/// span.
///
/// Available with the package's `Tracing` trait, and on as soon as the trait is enabled:
///
/// ```swift
/// .package(url: "https://github.com/…/swift-operations", from: "0.1.0", traits: ["Tracing"])
/// ```
///
/// An operation's span starts when the operation starts executing and ends when it finishes.
/// Its parent is the `ServiceContext` that was current where the operation was added to its
/// queue, so the work a request hands to queues shows up under the request's span in Jaeger,
/// Zipkin or any OpenTelemetry backend; a group's children are children of the group's span.
/// An operation started by hand takes the context current where it starts. An operation
/// cancelled before it started gets an empty span where it finished, so that cancelled work is
/// visible too.
///
/// The span is named after the operation's ``Op/name`` (or its class) and carries these
/// attributes: `operations.type` (the class), `operations.queue` (the queue's name),
/// `operations.group` (the group's name, for a group's child), and `operations.outcome`
/// (`succeeded`, `failed` or `cancelled`). An operation's ``Op/error`` is recorded on its span,
/// whose status is then `error`.
///
/// Spans go to ``tracer``, by default the tracer bootstrapped with `InstrumentationSystem`.
public enum OpTracing {
    /// Whether operations become spans; `true` by default.
    public static var isEnabled: Bool {
        get { DistributedTracingInstrument.shared.isInstalled }
        set { DistributedTracingInstrument.shared.setInstalled(newValue) }
    }

    /// The tracer that spans are started with; `nil` (the default) means the one bootstrapped
    /// with `InstrumentationSystem`, looked up as each span starts.
    ///
    /// Set it to send operations' spans elsewhere, for example to an `InMemoryTracer` in tests.
    public static var tracer: (any Tracer)? {
        get { DistributedTracingInstrument.shared.configuredTracer.withLockedValue { $0 } }
        set {
            let old = DistributedTracingInstrument.shared.configuredTracer.withLockedValue { tracer in
                defer { tracer = newValue }
                return tracer
            }
            withExtendedLifetime(old) {}   // released outside the lock
        }
    }
}
#endif
