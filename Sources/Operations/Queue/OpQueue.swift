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
/// Its bookkeeping takes memory in proportion to the operations it holds now, however many went
/// through it and however often their priorities changed: a queue that is never empty (a
/// server's) can run for as long as the process does.
///
/// Queues are `Equatable` and `Hashable` by identity, as `NSObject`s are.
open class OpQueue: @unchecked Sendable, CustomStringConvertible {
    // @unchecked Sendable: `machine`, `admission`, `coalescing`, `storedName`, `storedUnderlyingQueue`,
    // `storedQualityOfService` and `owningGroup` are only touched with `lock` held; `registry` and `progress` are
    // thread-safe on their own; `isMainQueue` is immutable.

    /// The value of ``maxConcurrentOperationCount`` that lets the queue decide (the default):
    /// as many operations as are ready, with the worker pool deciding how many threads run them.
    public static let defaultMaxConcurrentOperationCount = -1

    private let lock = Lock()

    /// Runs `body` with the queue's lock held (checking the scheduler's invariants afterwards
    /// when built with `-D OPERATIONS_INTERNAL_CHECKS`). `body` must not call user code.
    @inline(__always)
    final func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        try lock.withLock {
            let result = try body()
            #if OPERATIONS_INTERNAL_CHECKS
            machine.checkInvariants()
            #endif
            return result
        }
    }

    /// The scheduler (see ``OpQueueStateMachine``); unchecked exclusivity on the hot path, checked
    /// in the checked build (see `Lock.swift`).
    #if OPERATIONS_INTERNAL_CHECKS
    final var machine = OpQueueStateMachine()
    final var admission = OpQueueStateMachine.Admission()
    final var coalescing = CoalescingTable()
    final var storedUnderlyingQueue: DispatchQueue?
    final var storedQualityOfService: DispatchQoS.QoSClass = .default
    #else
    @exclusivity(unchecked) final var machine = OpQueueStateMachine()
    /// Admission control (see ``OpQueueStateMachine/Admission``), beside the scheduler.
    @exclusivity(unchecked) final var admission = OpQueueStateMachine.Admission()
    /// The members added with a coalescing key (see ``CoalescingTable``).
    @exclusivity(unchecked) final var coalescing = CoalescingTable()
    @exclusivity(unchecked) final var storedUnderlyingQueue: DispatchQueue?
    @exclusivity(unchecked) final var storedQualityOfService: DispatchQoS.QoSClass = .default
    #endif
    private var storedName: String?
    /// The group whose children this queue runs, while it runs them (see ``GroupOp``): each
    /// member that leaves is reported to it, and operations added through the public methods
    /// become its children (see ``admit(_:)``). Set when the group starts and cleared when it
    /// finishes, with the lock held.
    final var owningGroup: GroupOp?
    /// Whether the queue is closed (see ``close()``), readable without the lock by the adds,
    /// which look at it before an operation's conditions. Relaxed: set once, under the lock, which
    /// the adds take next and which then tells them for sure.
    final let isClosedFlag = Atomic<Bool>(false)
    /// The ``OpQueueObserver``s (see ``addObserver(_:)``), and whether there are any, readable
    /// without a lock by the adds.
    final let queueObservers = LockedBox<[any OpQueueObserver]>([])
    final let hasQueueObservers = Atomic<Bool>(false)
    /// The queue's observers (created with the queue: a queue is long-lived, and reading a `let`
    /// needs no lock on the hot path).
    final let registry = ObserverRegistry()
    private let isMainQueue: Bool
    /// Whether the queue runs a group's children (it is then not in the ``QueueRegistry``).
    final let isGroupQueue: Bool
    /// Tells queues apart for the life of the process (a new queue may reuse a dead one's
    /// address); used by trace recordings to name each queue once.
    final let serial: UInt64 = OpQueue.serialCounter.add(1, ordering: .relaxed).newValue
    /// Relaxed: serial numbers only need to be unique.
    private static let serialCounter = Atomic<UInt64>(0)

    /// The queue's progress: once you set its ``OpProgress/totalUnitCount``, every operation that
    /// leaves the queue (finished, its completion block returned; barriers included) adds one to
    /// ``OpProgress/completedUnitCount``, and running operations that report their own
    /// ``Op/progress`` count by their fractions.
    public let progress = OpProgress(queue: ())

    /// Creates a queue with the default width, not suspended.
    public init() {
        isMainQueue = false
        isGroupQueue = false
        QueueRegistry.register(self)
    }

    /// Creates the queue of a group's children: not in the ``QueueRegistry`` (the group's own
    /// queue reports what they hold; see ``operationsHoldingWorkers()``).
    init(childrenOf group: ()) {
        isMainQueue = false
        isGroupQueue = true
    }

    private init(mainQueue: ()) {
        isMainQueue = true
        storedName = "OpQueue.main"
        storedUnderlyingQueue = DispatchQueue.main
        storedQualityOfService = .userInteractive
        _ = machine.setMaxConcurrentOperationCount(1)
        isGroupQueue = false
        QueueRegistry.register(self)
    }

    deinit {
        if !isGroupQueue {
            QueueRegistry.unregister(self)
        }
        if machine.isSuspended {
            // Released while suspended: the exclusivity table, told of the suspension, forgets it.
            // (This takes the table's lock: nothing may release a queue, or an operation, which
            // holds its queue, with that lock held.)
            Exclusivity.forgetSuspendedQueue(ObjectIdentifier(self))
        }
    }

    /// The synchronous operations executing in this queue if it runs on the worker pool (see
    /// ``QueueRegistry/operationsOnWorkerPool()``), and those of the groups executing in it.
    final func operationsHoldingWorkers() -> [Op] {
        let (holding, groups): ([Op], [GroupOp]) = withLock {
            guard storedUnderlyingQueue == nil else { return ([], []) }
            let executing = machine.members.elements.filter(\.isExecuting)
            return (executing.filter { !$0.isAsynchronous }, executing.compactMap { $0 as? GroupOp })
        }
        return holding + groups.flatMap { $0.childOperationsHoldingWorkers() }
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
    /// ``AsyncOp``, the current task) is running; ``main`` on the main thread (or in a block of
    /// the main Dispatch queue) outside such an operation, as in Foundation; `nil` elsewhere.
    ///
    /// In a child of a ``GroupOp``, it is the group's own queue of children: an operation added
    /// to it (with any of its `addOperation` methods, or as a barrier) becomes a child of the group,
    /// as ``GroupOp/addChild(_:)`` would make it, and the group finishes only after it.
    public static var current: OpQueue? {
        if let queue = ThreadContext.queue { return queue }
        if let queue = Op.currentTaskOperation?.withState({ $0.queue }) { return queue }
        return WaitDeadlocks.isOnMainQueueOrThread ? main : nil
    }


    /// How long a dependency cycle whose operations are all in queues may stay unbroken before
    /// the library ends it (1 second by default).
    ///
    /// A cycle is reported to ``OpDiagnostics`` as soon as it is found, and left alone for this
    /// long so that the program can still break it, by cancelling one of its operations or
    /// removing one of its dependencies, as Foundation lets it. After that, every operation on it
    /// is cancelled with a ``DependencyCycleError`` and its queue goes on. A wait for one of its
    /// operations, or for a queue that holds one, ends it at once whatever this says. The setting
    /// is read when the last operation of a cycle joins a queue. See <doc:Reliability>.
    public static var dependencyCycleGracePeriod: Duration {
        get { .nanoseconds(CycleWatch.gracePeriodNanoseconds.load(ordering: .relaxed)) }
        set {
            let (seconds, attoseconds) = newValue.components
            let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
            let (total, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
            let nanoseconds: Int64 = overflow || overflowAgain ? .max : max(0, total)
            CycleWatch.gracePeriodNanoseconds.store(nanoseconds, ordering: .relaxed)
        }
    }

    // MARK: Adding operations

    /// Adds an operation; the queue starts it when it is ready and a slot is free.
    ///
    /// - Important: An operation can be added once, to one queue, before it starts. Adding one
    ///   that is in a queue already, a child of a ``GroupOp`` (its group runs it), executing or
    ///   finished is a programmer error and traps.
    open func addOperation(_ operation: Op) {
        admit(CollectionOfOne(operation))
    }

    /// Adds several operations at once and, if `wait` is `true`, blocks until all of them have
    /// finished and their completion blocks have returned.
    ///
    /// From `async` code use the `async` overload, which suspends instead of blocking a thread.
    /// In top-level code (a `main.swift` that uses `await`), Swift 6.3 still resolves the call
    /// to this overload and reports it as unavailable: make it from an `async` function instead.
    @available(*, noasync, message: "Use `await addOperations(_:waitUntilFinished:)`, which suspends instead of blocking a thread; in top-level code, where Swift picks this overload even after `await`, await it from an `async` function")
    open func addOperations(_ operations: [Op], waitUntilFinished wait: Bool) {
        admit(operations)
        if wait {
            SynchronousWaitsInTasks.note(.addedOperations, target: description)
            Op.blockUntilAllFinished(operations)
        }
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
        operation.membership.isBarrier = true
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
            var exclusivity: Exclusivity.Suspension?
            updateSetting(.isSuspended) { machine in
                let old = machine.isSuspended
                // Under the queue's lock: the exclusivity table learns it with the queue, and the
                // operations that wait for categories stop waiting while it is suspended.
                if newValue != old { exclusivity = Exclusivity.queue(self, isSuspended: newValue) }
                return (machine.setSuspended(newValue), old, newValue)
            }
            exclusivity?.perform()
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
    /// closures (so their tasks get the matching priority). On the library's own worker pool,
    /// when workers are scarce, the queues of a higher class get a worker first: a
    /// `.userInitiated` queue does not wait behind a backlog of `.background` work (on Apple
    /// platforms, its work also runs on threads of that class). The default is `.default`
    /// (`.userInteractive` for ``main``).
    public var qualityOfService: DispatchQoS.QoSClass {
        get { withLock { storedQualityOfService } }
        set { withLock { storedQualityOfService = newValue } }
    }

    /// A Dispatch queue to run the operations on instead of the library's worker pool.
    ///
    /// The operations then interleave with the other work of that Dispatch queue: the queue runs
    /// ready operations one after another for at most about a millisecond, then hands the
    /// Dispatch queue back and carries on behind the work submitted meanwhile. A serial Dispatch
    /// queue runs them one at a time whatever ``maxConcurrentOperationCount`` says.
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
    ///
    /// The operations that have not started are cancelled first, in the order they were added,
    /// and the executing ones after them: an executing operation that returns as soon as it is
    /// cancelled frees its slot, and by then every operation that was waiting for the slot is
    /// cancelled, so none of them runs its body.
    open func cancelAllOperations() {
        var executing: [Op] = []
        for operation in operations {
            if operation.flags.load(ordering: .relaxed) & Op.Flags.executing != 0 {
                executing.append(operation)
            } else {
                operation.cancel()
            }
        }
        for operation in executing {
            operation.cancel()
        }
    }

    /// Blocks the calling thread until the queue is empty: every operation, barriers included,
    /// has finished and its completion block has returned. Other threads may keep adding
    /// operations meanwhile, which prolongs the wait.
    ///
    /// - Important: Waiting from one of the queue's own operations, or waiting on the main thread
    ///   for ``main``, could never return; it traps with an explanation instead.
    ///
    /// From `async` code use the `async` overload, which suspends instead of blocking a thread.
    /// In top-level code (a `main.swift` that uses `await`), Swift 6.3 still resolves
    /// `await queue.waitUntilAllOperationsAreFinished()` to this overload and reports it as
    /// unavailable: await the queue from an `async` function instead.
    @available(*, noasync, message: "Use `await waitUntilAllOperationsAreFinished()`, which suspends instead of blocking a thread; in top-level code, where Swift picks this overload even after `await`, await it from an `async` function")
    open func waitUntilAllOperationsAreFinished() {
        SynchronousWaitsInTasks.note(.queue, target: description)
        WaitDeadlocks.checkWaitForAll(in: self)
        let semaphore = DispatchSemaphore(value: 0)
        if addEmptyWaiter({ semaphore.signal() }) {
            CycleSearchingWait.block(on: semaphore) { DependencyCycles.endCycles(blockingMembersOf: self) }
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
