#if ServiceLifecycle
public import ServiceLifecycle

/// An ``OpQueue`` as a swift-service-lifecycle `Service`: when its `ServiceGroup` shuts down
/// gracefully (on SIGTERM, say), the queue shuts down with it, giving the work inside a grace
/// period to finish (see ``OpQueue/shutdown(gracePeriod:clock:)``).
///
/// Available with the package's `ServiceLifecycle` trait:
///
/// ```swift
/// let jobs = OpQueue()
/// let group = ServiceGroup(
///     configuration: .init(
///         services: [.init(service: httpServer),
///                    .init(service: OpQueueService(queue: jobs, gracePeriod: .seconds(10)))],
///         gracefulShutdownSignals: [.sigterm],
///         logger: logger))
/// try await group.run()
/// ```
///
/// ``run()`` waits for the graceful shutdown, then awaits the queue's shutdown and returns. If
/// its task is cancelled instead (the group ends without a graceful shutdown), the queue is shut
/// down with no grace period: what is left is cancelled at once, and waited for.
public struct OpQueueService: Service {
    /// The queue the service shuts down.
    public let queue: OpQueue
    /// How long the operations in the queue may take, once the graceful shutdown begins, before
    /// they are cancelled.
    public let gracePeriod: Duration

    /// Creates a service that shuts `queue` down with `gracePeriod` when its group shuts down.
    public init(queue: OpQueue, gracePeriod: Duration) {
        self.queue = queue
        self.gracePeriod = gracePeriod
    }

    /// Suspends until the graceful shutdown (or the cancellation of the calling task), then shuts
    /// the queue down and returns once it is empty.
    public func run() async throws {
        // Throws only when the task is cancelled: then no grace period.
        let graceful = (try? await gracefulShutdown()) != nil
        await queue.shutdown(gracePeriod: graceful ? gracePeriod : .zero)
    }
}
#endif
