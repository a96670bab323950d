/// Something that hears of operations entering queues, starting and finishing, while it is
/// installed in ``Instruments``: a trace recording, or the distributed-tracing integration.
///
/// Every method is called on the thread where the event happens, outside the library's locks,
/// and must return quickly: it runs on the path of every operation.
protocol OpInstrument: AnyObject, Sendable {
    /// `operations` are about to enter `queue`, at `time` (nanoseconds of Dispatch's uptime
    /// clock), on the thread that adds them.
    func operationsEnqueued(_ operations: [Op], in queue: OpQueue, at time: UInt64)

    /// `operation` starts executing at `time` on `thread`.
    func operationStarted(_ operation: Op, at time: UInt64, thread: TraceThread)

    /// `operation` finished, as `finish` says.
    func operationFinished(_ operation: Op, _ finish: InstrumentedFinish)
}
