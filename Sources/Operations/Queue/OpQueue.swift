public import Dispatch
import Synchronization

/// A queue that runs operations according to their readiness, priority and the queue's width,
/// the counterpart of Foundation's `OperationQueue`.
///
/// ```swift
/// let queue = OpQueue()
/// queue.maxConcurrentOperationCount = 4
/// let manifest = BlockOp { fetchManifest() }
/// let files = names.map { name in BlockOp { fetch(name) } }
/// files.forEach { $0.addDependency(manifest) }
/// queue.addOperations([manifest] + files, waitUntilFinished: false)
/// ```
///
/// Operations stay in the queue until they finish (and their completion block returns). Among the
/// operations that are ready, the one with the highest ``Op/queuePriority`` starts first, and
/// equal priorities start in the order they became ready. Up to ``maxConcurrentOperationCount``
/// run at once, on the library's worker threads (or on ``underlyingQueue``); the pool adds
/// threads when operations block, so a queue of width N really runs N operations at once.
///
/// A queue with work keeps itself alive; a queue with no work and no references is released.
open class OpQueue: @unchecked Sendable, CustomStringConvertible {
    // @unchecked Sendable: `machine`, `storedName`, `storedUnderlyingQueue`,
    // `storedQualityOfService` are only touched with `lock` held; `registry` and `progress` are
    // thread-safe on their own.

    /// The value of ``maxConcurrentOperationCount`` that lets the queue decide (the default):
    /// as many operations as are ready, with the worker pool deciding how many threads run them.
    public static let defaultMaxConcurrentOperationCount = -1

    private let lock = Lock()

    /// Runs `body` with the queue's lock held (checking the scheduler's invariants afterwards
    /// when built with `-D OPERATIONS_INTERNAL_CHECKS`). `body` must not call user code.
    @inline(__always)
    private func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        try lock.withLock {
            let result = try body()
            #if OPERATIONS_INTERNAL_CHECKS
            machine.checkInvariants()
            #endif
            return result
        }
    }
    @exclusivity(unchecked) private var machine = OpQueueStateMachine()
    @exclusivity(unchecked) private var storedName: String?
    @exclusivity(unchecked) private var storedUnderlyingQueue: DispatchQueue?
    @exclusivity(unchecked) private var storedQualityOfService: DispatchQoS.QoSClass = .default
    /// The queue's observers (created with the queue: a queue is long-lived, and reading a `let`
    /// needs no lock on the hot path).
    private let registry = ObserverRegistry()
    private let isMainQueue: Bool

    /// The queue's progress: once you set its ``OpProgress/totalUnitCount``, every operation that
    /// leaves the queue (finished, its completion block returned; barriers included) adds one to
    /// ``OpProgress/completedUnitCount``.
    public let progress = OpProgress()

    /// Creates a queue with the default width, not suspended.
    public init() {
        isMainQueue = false
    }

    private init(mainQueue: ()) {
        isMainQueue = true
        storedName = "OpQueue.main"
        storedUnderlyingQueue = DispatchQueue.main
        storedQualityOfService = .userInteractive
        _ = machine.setMaxConcurrentOperationCount(1)
    }

    /// The queue that runs its operations one at a time on `DispatchQueue.main`, interleaved
    /// with the main queue's other work.
    ///
    /// Its width is 1 and its ``underlyingQueue`` is `DispatchQueue.main`. Something must serve the
    /// main Dispatch queue for the operations to run: an app's run loop, `dispatchMain()`, or
    /// Swift's main actor in an `async` entry point. On Apple platforms that is the main thread;
    /// on Linux, once the main thread has called `dispatchMain()` (as an `async` entry point does),
    /// Dispatch serves the main queue from another thread.
    public static let main = OpQueue(mainQueue: ())

    /// The queue that started the operation the calling thread (or, in the `async` body of an
    /// ``AsyncOp``, the current task) is running, or `nil` outside operations of a queue.
    public static var current: OpQueue? {
        if let queue = currentQueue.value { return queue }
        return Op.currentTaskOperation?.withState { $0.queue }
    }

    static let currentQueue = ThreadLocal<OpQueue>()

    /// Set while a drainer finishes an operation of this queue and will ask for the next one.
    static let pollingQueue = ThreadLocal<OpQueue>()

    // MARK: Adding operations

    /// Adds an operation; the queue starts it when it is ready and a slot is free.
    ///
    /// - Important: An operation can be added once, to one queue, before it starts. Adding one
    ///   that is in a queue already, executing or finished is a programmer error and traps.
    open func addOperation(_ operation: Op) {
        enqueue(CollectionOfOne(operation))
    }

    /// Adds several operations at once and, if `wait` is `true`, blocks until all of them have
    /// finished and their completion blocks have returned.
    ///
    /// From `async` code use the `async` overload, which suspends instead of blocking a thread.
    @available(*, noasync, message: "Use `await addOperations(_:waitUntilFinished:)`, which suspends instead of blocking a thread")
    open func addOperations(_ operations: [Op], waitUntilFinished wait: Bool) {
        enqueue(operations)
        if wait {
            for operation in operations {
                operation.waitUntilFinished()
            }
        }
    }

    /// Adds operations without waiting for them.
    final func enqueue<Operations: Sequence<Op>>(_ operations: Operations) {
        var drainerRequested = false
        var stallCheck: UInt64?
        let changes: QueueChanges = withLock {
            let countBefore = machine.operationCount
            let operationsBefore = observedOperations()
            for operation in operations {
                // The operation is enqueued (or refused) before it becomes a member, so that a
                // refused one never touches this queue's fields. Holding the queue's lock, no
                // readiness change can reach the queue in between.
                let enqueued = operation.withState { $0.enqueue(in: self) }
                if case .misuse(let misuse) = enqueued {
                    operation.trap(misuse)
                }
                machine.addMember(operation)
                if case .schedule(let schedule) = enqueued {
                    let entry = ReadyLists.Entry(operation: operation, ticket: schedule.ticket)
                    drainerRequested = machine.push(entry, priority: schedule.priority, callerWillPoll: false) || drainerRequested
                }
            }
            if let generation = machine.stallCheckIfNeeded() { stallCheck = generation }
            return recordMembershipChange(countBefore: countBefore, operationsBefore: operationsBefore)
        }
        if let stallCheck { scheduleStallCheck(generation: stallCheck) }
        if drainerRequested { startDrainer() }
        if changes.recorded { registryDeliver() }
    }

    /// Wraps `block` in an operation and adds it.
    open func addOperation(_ block: @escaping @Sendable () -> Void) {
        addOperation(BlockOp(block: block))
    }

    /// Adds a barrier: `barrier` runs once every operation added before it has finished, and no
    /// operation added after it starts until it has returned, like `DispatchQueue`'s barrier flag.
    ///
    /// The barrier holds even when the queue is empty or suspended (it then runs only once the
    /// queue is resumed), and ``waitUntilAllOperationsAreFinished()-2ptgv`` waits for it.
    open func addBarrierBlock(_ barrier: @escaping @Sendable () -> Void) {
        let operation = BlockOp(block: barrier)
        operation.isBarrier = true
        addOperation(operation)
    }

    // MARK: Inspecting

    /// The operations in the queue (waiting, ready or executing), in the order they were added.
    public var operations: [Op] {
        withLock { machine.members.elements }
    }

    /// The number of operations in the queue. It changes as operations finish; use it for display,
    /// not to decide what to do next.
    public var operationCount: Int {
        withLock { machine.operationCount }
    }

    // MARK: Settings

    /// The most operations the queue runs at once; ``defaultMaxConcurrentOperationCount`` (the
    /// default) lets the queue run every ready operation, with the worker pool choosing the threads.
    ///
    /// Lowering it does not stop running operations. `1` makes the queue run one operation at a
    /// time, in priority order among the ready ones (not necessarily in the order they were added:
    /// use dependencies for that). `0` starts nothing, like a suspended queue.
    ///
    /// - Important: Negative values other than ``defaultMaxConcurrentOperationCount`` are a
    ///   programmer error and trap, and so is changing the width of ``main``.
    public var maxConcurrentOperationCount: Int {
        get { withLock { machine.maxConcurrentOperationCount } }
        set {
            if newValue < 0 && newValue != OpQueue.defaultMaxConcurrentOperationCount {
                misuse("maxConcurrentOperationCount of \(self) was set to \(newValue). Use a positive count, or OpQueue.defaultMaxConcurrentOperationCount (-1) to let the queue decide.")
            }
            if isMainQueue && newValue != 1 {
                misuse("maxConcurrentOperationCount of OpQueue.main was set to \(newValue); the main queue runs one operation at a time on DispatchQueue.main. Create your own OpQueue for work that may run in parallel.")
            }
            updateSetting(.maxConcurrentOperationCount) { machine in
                let old = machine.maxConcurrentOperationCount
                return (machine.setMaxConcurrentOperationCount(newValue), old, newValue)
            }
        }
    }

    /// Whether the queue is holding back new starts. Running operations are never interrupted;
    /// operations can still be added and start once the queue is resumed.
    public var isSuspended: Bool {
        get { withLock { machine.isSuspended } }
        set {
            updateSetting(.isSuspended) { machine in
                let old = machine.isSuspended
                return (machine.setSuspended(newValue), old, newValue)
            }
        }
    }

    /// The queue's name, for diagnostics; by default "OpQueue" followed by its address.
    public var name: String? {
        get { withLock { storedName ?? defaultName } }
        set {
            updateSetting(.name) { _ in
                let old = storedName ?? defaultName
                storedName = newValue
                return (false, old as String?, newValue ?? defaultName as String?)
            }
        }
    }

    private var defaultName: String {
        "OpQueue \(ObjectIdentifier(self).debugDescription.dropFirst("ObjectIdentifier(".count).dropLast())"
    }

    /// The quality of service of the queue's work.
    ///
    /// It is the Dispatch QoS with which the queue submits work to its ``underlyingQueue``, and
    /// the quality of service given to the operations that `addOperation` creates for `async`
    /// closures (so their tasks get the matching priority); the library's own worker pool runs all
    /// work alike. The default is `.default`
    /// (`.userInteractive` for ``main``).
    public var qualityOfService: DispatchQoS.QoSClass {
        get { withLock { storedQualityOfService } }
        set { withLock { storedQualityOfService = newValue } }
    }

    /// A Dispatch queue to run the operations on instead of the library's worker pool.
    ///
    /// The operations then interleave with the other work of that Dispatch queue; a serial
    /// Dispatch queue runs them one at a time whatever ``maxConcurrentOperationCount`` says.
    ///
    /// - Important: It can only be changed while the queue is empty; changing it while the queue
    ///   holds operations traps. The main queue's underlying queue cannot be changed.
    public var underlyingQueue: DispatchQueue? {
        get { withLock { storedUnderlyingQueue } }
        set {
            if isMainQueue {
                misuse("The underlyingQueue of OpQueue.main is DispatchQueue.main and cannot be changed. Create your own OpQueue to run operations on another Dispatch queue.")
            }
            let count: Int = withLock {
                guard machine.operationCount == 0 else { return machine.operationCount }
                storedUnderlyingQueue = newValue
                return 0
            }
            if count != 0 {
                misuse("underlyingQueue of \(self) was changed while it holds \(count) operation(s). Set it before adding operations, or wait until the queue is empty (waitUntilAllOperationsAreFinished()).")
            }
        }
    }

    // MARK: Cancelling and waiting

    /// Cancels every operation in the queue, waiting and executing alike (``Op/cancel()``).
    ///
    /// Waiting operations become ready (cancellation overrides dependencies) and finish without
    /// running as soon as the queue starts them: when it has a free slot, is not suspended, and
    /// no earlier barrier is pending. Executing ones should notice and return early. Pending
    /// barriers are cancelled too, so their blocks do not run.
    open func cancelAllOperations() {
        for operation in operations {
            operation.cancel()
        }
    }

    /// Blocks the calling thread until the queue is empty: every operation, barriers included,
    /// has finished and its completion block has returned. Other threads may keep adding
    /// operations meanwhile, which prolongs the wait.
    ///
    /// - Important: Waiting from one of the queue's own operations, or waiting on the main thread
    ///   for ``main``, could never return; it traps with an explanation instead.
    @available(*, noasync, message: "Use `await waitUntilAllOperationsAreFinished()`, which suspends instead of blocking a thread")
    open func waitUntilAllOperationsAreFinished() {
        WaitDeadlocks.checkWaitForAll(in: self)
        let semaphore = DispatchSemaphore(value: 0)
        if addEmptyWaiter({ semaphore.signal() }) {
            semaphore.wait()
        }
    }

    /// Registers `waiter` to be called when the queue becomes empty; returns `false` (without
    /// registering) if it is empty now.
    final func addEmptyWaiter(_ waiter: @escaping @Sendable () -> Void) -> Bool {
        withLock { machine.addWaiter(waiter) }
    }

    /// A description naming the queue: `OpQueue "name"`, or its default name.
    public var description: String {
        withLock {
            if let storedName { return "OpQueue \"\(storedName)\"" }
            return defaultName
        }
    }
}

// MARK: - Scheduling (called by operations and drainers)

extension OpQueue {
    /// Puts a member that became ready on the ready list.
    final func schedule(_ operation: Op, _ schedule: OpStateMachine.Schedule) {
        let callerWillPoll = OpQueue.pollingQueue.value === self
        let request = withLock {
            machine.push(ReadyLists.Entry(operation: operation, ticket: schedule.ticket),
                         priority: schedule.priority, callerWillPoll: callerWillPoll)
        }
        if request { startDrainer() }
    }

    /// Puts several members that became ready at the same moment on their queues' ready lists,
    /// one lock acquisition per queue, so that each queue sees them all before it picks one.
    static func scheduleTogether(_ ready: [(operation: Op, queue: OpQueue, schedule: OpStateMachine.Schedule)]) {
        var remaining = ready[...]
        while let first = remaining.first {
            let queue = first.queue
            let callerWillPoll = OpQueue.pollingQueue.value === queue
            let request = queue.withLock {
                var request = false
                for item in remaining where item.queue === queue {
                    let entry = ReadyLists.Entry(operation: item.operation, ticket: item.schedule.ticket)
                    request = queue.machine.push(entry, priority: item.schedule.priority, callerWillPoll: callerWillPoll) || request
                }
                return request
            }
            if request { queue.startDrainer() }
            remaining = remaining.filter { $0.queue !== queue }[...]
        }
    }

    /// An operation gave its slot back outside a drainer.
    final func releaseSlot(of operation: Op) {
        let request = withLock { machine.releaseSlot() }
        if request { startDrainer() }
    }

    /// A member is finished for good and leaves the queue.
    final func operationDidLeave(_ operation: Op) {
        let departure = withLock { leaveLocked(operation, callerWillPoll: false) }
        finishDeparture(departure, leaving: nil)
    }

    /// What a departure asks for once the lock is released.
    struct Departure {
        var action: OpQueueStateMachine.Action
        var changes: QueueChanges
        var stallCheck: UInt64?
        var discarded: [ReadyLists.Entry]
    }

    /// Removes a member that is finished for good. Call with the lock held.
    private final func leaveLocked(_ operation: Op, callerWillPoll: Bool) -> Departure {
        let countBefore = machine.operationCount
        let operationsBefore = observedOperations()
        let action = machine.removeMember(operation, callerWillPoll: callerWillPoll)
        let discarded = machine.takeDiscarded()
        registry.record(property: QueueProperty.finishedOperation.rawValue, oldValue: (), newValue: operation)
        var changes = recordMembershipChange(countBefore: countBefore, operationsBefore: operationsBefore)
        changes.recorded = changes.recorded || registry.observes(QueueProperty.finishedOperation.rawValue)
        return Departure(action: action, changes: changes, stallCheck: machine.stallCheckIfNeeded(), discarded: discarded)
    }

    /// Performs what a departure asks for, outside the lock: progress, observers, and the waiters of
    /// the queue; then completes `leaving` (a drainer's operation), whose waiters see it gone.
    private final func finishDeparture(_ departure: Departure, leaving: Op?) {
        withExtendedLifetime(departure.discarded) {}
        if let stallCheck = departure.stallCheck { scheduleStallCheck(generation: stallCheck) }
        progress.operationFinished()
        if departure.action.requestDrainer { startDrainer() }
        if departure.changes.recorded { registryDeliver() }
        leaving?.completeAfterLeaving()
        for waiter in departure.action.waiters {
            waiter()
        }
        withExtendedLifetime(departure.action.departed) {}
    }

    /// Checks the queue for a stall again (after a dependency of one of its operations changed,
    /// which may have made or broken a cycle).
    final func rearmStallCheck() {
        let generation: UInt64? = withLock {
            machine.noteGraphChanged()
            return machine.stallCheckIfNeeded()
        }
        if let generation { scheduleStallCheck(generation: generation) }
    }

    /// What `operation`, one of this queue's members, waits for because of barriers.
    final func barrierWaits(of operation: Op) -> [Op] {
        withLock { machine.barrierWaits(of: operation) }
    }

    /// How long a queue must stay stalled before its waiting operations are searched for cycles.
    static let stallCheckDelay: DispatchTimeInterval = .milliseconds(50)

    /// Checks a stalled queue again after ``stallCheckDelay``; if it stayed stalled, ends the
    /// dependency cycles among its waiting operations (if any: it may just be waiting for
    /// operations that run elsewhere).
    final func scheduleStallCheck(generation: UInt64) {
        DispatchQueue.global().asyncAfter(deadline: .now() + OpQueue.stallCheckDelay) {
            switch self.withLock({ self.machine.stallCheckFired(generation: generation) }) {
            case .none:
                return
            case .later(let newGeneration):
                self.scheduleStallCheck(generation: newGeneration)
            case .scan(let members):
                for cycle in DependencyCycles.cycles(from: members, successors: DependencyCycles.waits) {
                    DependencyCycles.end(cycle: cycle)
                }
            }
        }
    }

    /// Reports that the queue started `operation` to ``events(bufferingPolicy:)`` subscribers.
    final func noteStarted(_ operation: Op) {
        guard registry.observes(QueueProperty.startedOperation.rawValue) else { return }
        registry.record(property: QueueProperty.startedOperation.rawValue, oldValue: (), newValue: operation)
        registry.deliver(to: self)
    }

    /// Starts a drainer on the underlying Dispatch queue or the worker pool.
    final func startDrainer() {
        if let (underlying, qos) = withLock({ storedUnderlyingQueue.map { ($0, storedQualityOfService) } }) {
            underlying.async(qos: DispatchQoS(qosClass: qos, relativePriority: 0)) { self.drain() }
        } else {
            WorkerPool.shared.submit { self.drain() }
        }
    }

    /// How long a drainer keeps going while other jobs wait for a worker, before it yields.
    private static let drainerTimeSlice: UInt64 = 2_000_000

    /// Pops and runs ready operations until none can start.
    private final func drain() {
        OpQueue.currentQueue.withValue(self) {
            drainLoop()
        }
    }

    /// The body of ``drain()``, with ``current`` set to this queue.
    private final func drainLoop() {
        withLock { machine.drainerStarted() }
        let started = DispatchTime.now().uptimeNanoseconds
        var releasing = false
        var leaving: OpQueueCompletion?
        while true {
            // One lock acquisition per operation: the one that just finished leaves, its slot is
            // given back, and the next one is taken.
            let (next, departure, stallCheck, discarded) = withLock {
                let departure = leaving.map { leaveLocked($0.operation, callerWillPoll: true) }
                let next = machine.next(releasingSlot: releasing)
                let discarded = machine.takeDiscarded()   // released below, outside the lock
                if case .stop = next { return (next, departure, machine.stallCheckIfNeeded(), discarded) }
                return (next, departure, nil, discarded)
            }
            withExtendedLifetime(discarded) {}
            if let departure, let leaving {
                finishDeparture(departure, leaving: leaving.operation)
            }
            leaving = nil
            if let stallCheck { scheduleStallCheck(generation: stallCheck) }
            guard case .run(let entry, let requestDrainer) = next else { return }
            if requestDrainer { startDrainer() }
            let outcome = entry.operation.runFromQueue(ticket: entry.ticket)
            switch outcome {
            case .finishedSynchronously(let completion):
                releasing = true
                leaving = completion
            case .skipped:
                releasing = true
            case .continuesAsynchronously:
                releasing = false
            }
            if WorkerPool.shared.pendingJobs.load(ordering: .relaxed) > 0,
               DispatchTime.now().uptimeNanoseconds - started > OpQueue.drainerTimeSlice {
                // Let other queues' jobs have this worker; the slot goes back and another drainer
                // is requested if work remains.
                if let leaving {
                    let departure = withLock { leaveLocked(leaving.operation, callerWillPoll: false) }
                    finishDeparture(departure, leaving: leaving.operation)
                }
                if releasing { releaseSlot(of: entry.operation) }
                return
            }
        }
    }
}

// MARK: - Observation storage

extension OpQueue {
    /// The queue's observer registry.
    final var observerRegistry: ObserverRegistry {
        registry
    }

    /// A snapshot of the members if someone observes `operations`. Call with the lock held.
    final func observedOperations() -> [Op]? {
        guard registry.observes(QueueProperty.operations.rawValue) else { return nil }
        return machine.members.elements
    }

    /// Records changes of `operationCount` and `operations`. Call with the lock held.
    final func recordMembershipChange(countBefore: Int, operationsBefore: [Op]?) -> QueueChanges {
        guard !registry.isEmpty else { return QueueChanges() }
        let countAfter = machine.operationCount
        guard countAfter != countBefore else { return QueueChanges() }
        if let operationsBefore {
            registry.record(property: QueueProperty.operations.rawValue,
                            oldValue: operationsBefore, newValue: machine.members.elements)
        }
        registry.record(property: QueueProperty.operationCount.rawValue, oldValue: countBefore, newValue: countAfter)
        return QueueChanges(recorded: true)
    }

    /// Runs a settings change under the lock, records it, starts a drainer if it asks for one,
    /// and delivers the change.
    final func updateSetting<Value>(
        _ property: QueueProperty,
        _ body: (inout OpQueueStateMachine) -> (requestDrainer: Bool, old: Value, new: Value)
    ) {
        let (request, observers, stallCheck): (Bool, ObserverRegistry, UInt64?) = withLock {
            let (request, old, new) = body(&machine)
            registry.record(property: property.rawValue, oldValue: old, newValue: new)
            return (request, registry, machine.stallCheckIfNeeded())
        }
        if let stallCheck { scheduleStallCheck(generation: stallCheck) }
        if request { startDrainer() }
        observers.deliver(to: self)
    }

    final func registryDeliver() {
        registry.deliver(to: self)
    }
}
