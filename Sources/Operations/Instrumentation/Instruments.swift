import Dispatch
import Synchronization

/// The installed ``OpInstrument``s, and the hooks through which operations and queues tell them
/// what happens.
///
/// When none is installed, an operation pays one relaxed atomic load when it starts, one when it
/// finishes (after reading its flags, which it does anyway), and one per batch when it is
/// enqueued.
enum Instruments {
    /// How many instruments are installed; read relaxed on the path of every operation.
    private static let installedCount = Atomic<Int>(installedFirst.count)
    private static let installed = LockedBox<[any OpInstrument]>(installedFirst)

    /// The instruments installed from the start: with the `Tracing` trait, distributed tracing;
    /// with the `Metrics` trait, metrics.
    private static var installedFirst: [any OpInstrument] {
        var instruments: [any OpInstrument] = []
        #if Tracing
        instruments.append(DistributedTracingInstrument.shared)
        #endif
        #if Metrics
        instruments.append(MetricsInstrument.shared)
        #endif
        return instruments
    }
    /// Numbers threads for traces, from 1.
    private static let threadCounter = Atomic<Int>(0)

    /// Whether any instrument is installed.
    @inline(__always)
    static var isActive: Bool {
        installedCount.load(ordering: .relaxed) != 0
    }

    static func install(_ instrument: any OpInstrument) {
        installed.withLockedValue { instruments in
            guard !instruments.contains(where: { $0 === instrument }) else { return }
            instruments.append(instrument)
            installedCount.store(instruments.count, ordering: .relaxed)
        }
    }

    static func remove(_ instrument: any OpInstrument) {
        installed.withLockedValue { instruments in
            instruments.removeAll { $0 === instrument }
            installedCount.store(instruments.count, ordering: .relaxed)
        }
    }

    private static var current: [any OpInstrument] {
        installed.withLockedValue { $0 }
    }

    /// Nanoseconds of Dispatch's uptime clock, the time base of every instrument event.
    static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// The calling thread, as traces know it.
    static var currentThread: TraceThread {
        let context = ThreadContext.current
        if context.pointee.traceThread == 0 {
            context.pointee.traceThread = threadCounter.add(1, ordering: .relaxed).newValue
        }
        return TraceThread(number: context.pointee.traceThread, isWorker: context.pointee.worker != nil)
    }

    // MARK: Hooks

    /// Sets ``Op/Flags/instrumented``: under the operation's lock, as its transitions store the
    /// flags under it (and keep this bit).
    private static func markInstrumented(_ operation: Op) {
        operation.withState { _ in
            _ = operation.flags.bitwiseOr(Op.Flags.instrumented, ordering: .relaxed)
        }
    }

    /// `operations` are about to enter `queue` (call only when ``isActive``).
    @inline(never)
    static func enqueued<Operations: Collection<Op>>(_ operations: Operations, in queue: OpQueue) {
        let time = now
        let operations = Array(operations)
        for operation in operations {
            markInstrumented(operation)
        }
        for instrument in current {
            instrument.operationsEnqueued(operations, in: queue, at: time)
        }
    }

    /// `operation` starts executing on the calling thread (call only when ``isActive``).
    @inline(never)
    static func started(_ operation: Op) {
        let time = now
        markInstrumented(operation)
        let thread = currentThread
        for instrument in current {
            instrument.operationStarted(operation, at: time, thread: thread)
        }
    }

    /// Runs the body of `operation`: with the `Tracing` trait, inside the `ServiceContext` of
    /// its span, so that spans the body makes (and tasks it creates) are children of the
    /// operation's span; otherwise simply.
    @inline(__always)
    static func runBody(of operation: Op, _ body: () -> Void) {
        #if Tracing
        DistributedTracingInstrument.shared.runBody(of: operation, body)
        #else
        body()
        #endif
    }

    /// `operation` finished (call only if it is ``Op/Flags/instrumented`` or an instrument is
    /// installed).
    @inline(never)
    static func finished(_ operation: Op, hasExecuted: Bool, queue: OpQueue?) {
        let time = now
        let instruments = current
        guard !instruments.isEmpty else { return }
        let (name, error, group) = operation.withState { machine in
            (machine.name, machine.error, machine.group)
        }
        let finish = InstrumentedFinish(
            time: time,
            thread: currentThread,
            serial: operation.serial,
            name: name,
            type: type(of: operation),
            queue: queue.flatMap { $0.isGroupQueue ? nil : $0 },
            group: group.map { ($0.serial, $0.name ?? "GroupOp #\($0.serial)") },
            dependencies: operation.dependencies.map(\.serial),
            error: error,
            isCancelled: operation.isCancelled,
            hasExecuted: hasExecuted,
            isAsynchronous: operation.isAsynchronousStorage
        )
        for instrument in instruments {
            instrument.operationFinished(operation, finish)
        }
    }
}
