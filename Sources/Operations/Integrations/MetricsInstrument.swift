#if Metrics
import CoreMetrics

/// The ``OpInstrument`` behind ``OpMetrics``: remembers when each operation was added and when it
/// started, and reports the counters, timers and gauges of its queue.
///
/// Installed from the start when the `Metrics` trait is enabled (see ``Instruments``). The
/// metrics of each queue are made once (by its name) and kept; they are made and recorded outside
/// the instrument's lock, since a factory and its handlers are the user's code. The children of
/// a ``GroupOp`` run in the group's own queue of children, which is not counted (the group is, in
/// its queue). An operation enqueued but never started or finished (released with a never-run
/// graph) leaves its time here, as with tracing.
final class MetricsInstrument: OpInstrument, Sendable {
    static let shared = MetricsInstrument()

    /// The metrics of one queue (by name).
    private struct QueueMetrics: Sendable {
        let enqueued: Counter
        let started: Counter
        let succeeded: Counter
        let failed: Counter
        let cancelled: Counter
        let wait: CoreMetrics.Timer
        let duration: CoreMetrics.Timer
        let pending: Gauge
        let running: Gauge

        init(queue: String, factory: any MetricsFactory) {
            let dimensions = [("queue", queue)]
            enqueued = Counter(label: "operations.enqueued", dimensions: dimensions, factory: factory)
            started = Counter(label: "operations.started", dimensions: dimensions, factory: factory)
            succeeded = Counter(label: "operations.finished", dimensions: dimensions + [("outcome", "succeeded")], factory: factory)
            failed = Counter(label: "operations.finished", dimensions: dimensions + [("outcome", "failed")], factory: factory)
            cancelled = Counter(label: "operations.finished", dimensions: dimensions + [("outcome", "cancelled")], factory: factory)
            wait = CoreMetrics.Timer(label: "operations.wait", dimensions: dimensions, factory: factory)
            duration = CoreMetrics.Timer(label: "operations.duration", dimensions: dimensions, factory: factory)
            pending = Gauge(label: "operations.pending", dimensions: dimensions, factory: factory)
            running = Gauge(label: "operations.running", dimensions: dimensions, factory: factory)
        }
    }

    private struct State {
        var isInstalled = true
        var factory: (any MetricsFactory)?
        /// Counts the changes of `factory`: metrics made with an older one are not kept.
        var factoryGeneration = 0
        /// The metrics made with the current factory, by queue name.
        var metrics: [String: QueueMetrics] = [:]
        /// By the operations' serial numbers: when each was added, then when it started.
        var times: [UInt64: UInt64] = [:]
    }

    private let state = LockedBox(State())

    private init() {}

    var isInstalled: Bool { state.withLockedValue { $0.isInstalled } }

    func setInstalled(_ newValue: Bool) {
        state.withLockedValue { state in
            guard state.isInstalled != newValue else { return }
            state.isInstalled = newValue
            // Under this lock, so that concurrent changes apply in order (Instruments' lock is
            // taken inside it, and calls out to nothing).
            if newValue { Instruments.install(self) } else { Instruments.remove(self) }
            if !newValue { state.times = [:] }
        }
    }

    var configuredFactory: (any MetricsFactory)? {
        get { state.withLockedValue { $0.factory } }
        set {
            let old = state.withLockedValue { state in
                defer {
                    state.factory = newValue
                    state.factoryGeneration += 1
                    state.metrics = [:]
                }
                return (state.factory, state.metrics)
            }
            withExtendedLifetime(old) {}   // released outside the lock
        }
    }

    /// The metrics of the queue named `name`, made if needed (outside the lock).
    private func metrics(of name: String) -> QueueMetrics {
        let (found, configured, generation) = state.withLockedValue { ($0.metrics[name], $0.factory, $0.factoryGeneration) }
        if let found { return found }
        let made = QueueMetrics(queue: name, factory: configured ?? MetricsSystem.factory)
        return state.withLockedValue { state in
            // Another thread may have made them meanwhile: the first kept wins.
            if let kept = state.metrics[name] { return kept }
            if state.factoryGeneration == generation { state.metrics[name] = made }
            return made
        }
    }

    /// The name that is the `queue` dimension, or `nil` for a queue not counted.
    private func dimension(of queue: OpQueue?) -> String? {
        guard let queue, !queue.isGroupQueue else { return nil }
        return queue.name ?? queue.description
    }

    private func recordGauges(_ metrics: QueueMetrics, _ counts: (pending: Int, running: Int)) {
        metrics.pending.record(counts.pending)
        metrics.running.record(counts.running)
    }

    // MARK: OpInstrument

    func operationsEnqueued(_ operations: [Op], in queue: OpQueue, at time: UInt64) {
        guard let name = dimension(of: queue) else { return }
        state.withLockedValue { state in
            for operation in operations { state.times[operation.serial] = time }
        }
        let metrics = metrics(of: name)
        metrics.enqueued.increment(by: operations.count)
        // Heard before they join: counted as joined.
        let counts = queue.gaugeCounts()
        recordGauges(metrics, (counts.pending + operations.count, counts.running))
    }

    func operationStarted(_ operation: Op, at time: UInt64, thread: TraceThread) {
        let queue = operation.withState { $0.queue }
        guard let queue, let name = dimension(of: queue) else { return }
        let enqueuedAt = state.withLockedValue { state in
            state.times.updateValue(time, forKey: operation.serial)
        }
        let metrics = metrics(of: name)
        metrics.started.increment()
        if let enqueuedAt, time >= enqueuedAt {
            metrics.wait.recordNanoseconds(Int64(time - enqueuedAt))
        }
        recordGauges(metrics, queue.gaugeCounts())
    }

    func operationFinished(_ operation: Op, _ finish: InstrumentedFinish) {
        guard let queue = finish.queue, let name = dimension(of: queue) else {
            _ = state.withLockedValue { $0.times.removeValue(forKey: finish.serial) }
            return
        }
        let startedAt = state.withLockedValue { $0.times.removeValue(forKey: finish.serial) }
        let metrics = metrics(of: name)
        if finish.isCancelled {
            metrics.cancelled.increment()
        } else if finish.error != nil {
            metrics.failed.increment()
        } else {
            metrics.succeeded.increment()
        }
        if finish.hasExecuted, let startedAt, finish.time >= startedAt {
            metrics.duration.recordNanoseconds(Int64(finish.time - startedAt))
        }
        recordGauges(metrics, queue.gaugeCounts(finishing: operation))
    }
}
#endif
