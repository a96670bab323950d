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
    // @unchecked Sendable: the mutable state (`events`, `isStopped`) is only touched under
    // `lock`; `startTime` is immutable.

    /// What happened to an operation, in the order the recording heard of it.
    enum Event {
        case enqueued(serial: UInt64, time: UInt64, queue: OpQueue?)
        case started(serial: UInt64, time: UInt64, thread: Int)
        case finished(InstrumentedFinish)
    }

    private let lock = Lock()
    private var events: [Event] = []
    private var threads: [Int: String] = [:]
    private var isStopped = false
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
    /// `stop()` again returns the same events again.
    public func stop() -> OpTrace {
        Instruments.remove(self)
        let stopTime = Instruments.now
        let (events, threads) = lock.withLock {
            isStopped = true
            return (self.events, self.threads)
        }
        return OpTrace(events: events, threads: threads, startTime: startTime, stopTime: stopTime)
    }

    // MARK: OpInstrument

    func operationsEnqueued(_ operations: [Op], in queue: OpQueue, at time: UInt64) {
        let queue = queue.isGroupQueue ? nil : queue
        lock.withLock {
            guard !isStopped else { return }
            events.reserveCapacity(events.count + operations.count)
            for operation in operations {
                events.append(.enqueued(serial: operation.serial, time: time, queue: queue))
            }
        }
    }

    func operationStarted(_ operation: Op, at time: UInt64, thread: Int) {
        let isWorker = Instruments.currentThread.isWorker
        lock.withLock {
            guard !isStopped else { return }
            events.append(.started(serial: operation.serial, time: time, thread: thread))
            nameThread(thread, isWorker: isWorker)
        }
    }

    func operationFinished(_ operation: Op, _ finish: InstrumentedFinish) {
        let isWorker = Instruments.currentThread.isWorker
        lock.withLock {
            guard !isStopped else { return }
            events.append(.finished(finish))
            nameThread(finish.thread, isWorker: isWorker)
        }
    }

    /// Names a thread the first time it appears. Call with the lock held.
    private func nameThread(_ thread: Int, isWorker: Bool) {
        if threads[thread] == nil {
            threads[thread] = isWorker ? "worker thread \(thread)" : "thread \(thread)"
        }
    }
}
