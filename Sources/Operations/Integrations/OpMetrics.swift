#if Metrics
public import CoreMetrics

/// Metrics of operations, with swift-metrics: counts, waits, durations, and the pending and
/// running operations of each queue.
///
/// Available with the package's `Metrics` trait, and on as soon as the trait is enabled. Every
/// metric has the dimension `queue`, the queue's ``OpQueue/name``; operations started by hand,
/// outside a queue, are not counted.
///
/// | label | kind | what |
/// |---|---|---|
/// | `operations.enqueued` | counter | operations added to the queue |
/// | `operations.started` | counter | operations that started executing |
/// | `operations.finished` | counter | operations that finished, with the dimension `outcome`: `succeeded`, `failed` or `cancelled` |
/// | `operations.wait` | timer | from being added to starting |
/// | `operations.duration` | timer | from starting to finishing |
/// | `operations.pending` | gauge | ``OpQueue/pendingOperationCount`` after each event |
/// | `operations.running` | gauge | operations executing in the queue after each event |
///
/// An operation cancelled before it started counts as finished (`cancelled`) without starting.
/// Metrics go to ``factory``, by default the factory bootstrapped with `MetricsSystem`.
///
/// ```swift
/// MetricsSystem.bootstrap(PrometheusMetricsFactory())
/// let uploads = OpQueue()
/// uploads.name = "uploads"    // the `queue` dimension
/// ```
public enum OpMetrics {
    /// Whether operations report metrics; `true` by default.
    public static var isEnabled: Bool {
        get { MetricsInstrument.shared.isInstalled }
        set { MetricsInstrument.shared.setInstalled(newValue) }
    }

    /// The factory that makes the metrics; `nil` (the default) means the one bootstrapped with
    /// `MetricsSystem`. Set it to send the metrics elsewhere, to a `TestMetrics` in tests, say;
    /// metrics made with the previous factory are not used again.
    public static var factory: (any MetricsFactory)? {
        get { MetricsInstrument.shared.configuredFactory }
        set { MetricsInstrument.shared.configuredFactory = newValue }
    }
}
#endif
