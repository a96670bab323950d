/// A trace being recorded: every operation enqueued, started or finished anywhere in the process
/// is recorded until you call ``stop()``.
///
/// Start one with ``OpTrace/startRecording()`` in a long-running program (a server that records
/// for a while when asked to); for a piece of code, ``OpTrace/record(_:)-(()->Void)`` is simpler.
///
/// ```swift
/// let recording = OpTrace.startRecording()
/// // … the program runs …
/// let trace = recording.stop()
/// try trace.chromeTraceJSON.write(to: url, atomically: true, encoding: .utf8)
/// ```
///
/// Several recordings may run at once; each sees every operation.
public final class OpTraceRecording: OpInstrument, @unchecked Sendable {
    // @unchecked Sendable: the mutable state (`events`, `threads`, `isStopped`, `stopTime`,
    // `queueNames`) is only touched under `lock`; `startTime` is immutable.

    /// What happened to an operation, in the order the recording heard of it.
    enum Event {
        case enqueued(serial: UInt64, time: UInt64, queueName: String?)
        case started(serial: UInt64, time: UInt64, thread: Int)
        /// `finish` without its queue: a recording keeps no queue alive.
        case finished(InstrumentedFinish, queueName: String?)
    }

    private let lock = Lock()
    private var events: [Event] = []
    private var threads: [Int: String] = [:]
    private var isStopped = false
    private var stopTime: UInt64?
    /// The names of the queues seen, by their serial numbers, read once per queue (an unnamed
    /// queue's name is formatted on each read); a recording keeps no queue alive.
    private var queueNames: [UInt64: String] = [:]
    private let startTime: UInt64

    init() {
        startTime = Instruments.now
        Instruments.install(self)
    }

    /// Whether the recording still records (``stop()`` was not called).
    public var isRecording: Bool {
        lock.withLock { !isStopped }
    }

    /// Stops recording and returns the trace of what was recorded.
    ///
    /// Operations that had not finished by then are in the trace as unfinished. Calling
    /// `stop()` again returns the same trace again.
    public func stop() -> OpTrace {
        end()
        let (events, threads, stopTime) = lock.withLock { (self.events, self.threads, self.stopTime) }
        return OpTrace(events: events, threads: threads, startTime: startTime, stopTime: stopTime ?? startTime)
    }

    /// Stops recording, without making the trace.
    func end() {
        Instruments.remove(self)
        let now = Instruments.now
        lock.withLock {
            guard !isStopped else { return }
            isStopped = true
            stopTime = now
        }
    }

    // MARK: OpInstrument

    // Each hook ignores an event from before the recording started: a hook that read the time
    // before this recording was installed may still find it installed.

    func operationsEnqueued(_ operations: [Op], in queue: OpQueue, at time: UInt64) {
        guard time >= startTime else { return }
        let queueName = name(of: queue.isGroupQueue ? nil : queue)
        lock.withLock {
            guard !isStopped else { return }
            events.reserveCapacity(events.count + operations.count)
            for operation in operations {
                events.append(.enqueued(serial: operation.serial, time: time, queueName: queueName))
            }
        }
    }

    func operationStarted(_ operation: Op, at time: UInt64, thread: TraceThread) {
        guard time >= startTime else { return }
        lock.withLock {
            guard !isStopped else { return }
            events.append(.started(serial: operation.serial, time: time, thread: thread.number))
            nameThread(thread)
        }
    }

    func operationFinished(_ operation: Op, _ finish: InstrumentedFinish) {
        guard finish.time >= startTime else { return }
        let queueName = name(of: finish.queue)
        let finish = finish.withoutQueue()
        lock.withLock {
            // A finish that happened before the stop but arrives after it still counts.
            guard !isStopped || finish.time <= stopTime ?? 0 else { return }
            events.append(.finished(finish, queueName: queueName))
            nameThread(finish.thread)
        }
    }

    /// The name of `queue`, read once per queue.
    private func name(of queue: OpQueue?) -> String? {
        guard let queue else { return nil }
        if let known = lock.withLock({ queueNames[queue.serial] }) {
            return known
        }
        let name = queue.name ?? ""   // outside the lock: it takes the queue's
        lock.withLock { queueNames[queue.serial] = name }
        return name
    }

    /// Names a thread the first time it appears. Call with the lock held.
    private func nameThread(_ thread: TraceThread) {
        if threads[thread.number] == nil {
            threads[thread.number] = thread.name
        }
    }
}
