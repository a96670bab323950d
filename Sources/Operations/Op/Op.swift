public import Dispatch
import Synchronization

/// An operation: one unit of work, run once, with dependencies, a priority, cancellation,
/// a completion block and observable state. The counterpart of Foundation's `Operation`.
///
/// Subclass `Op` and override ``main()`` for synchronous work, use ``BlockOp`` for closures,
/// ``InvocationOp`` to call a method of an existing object, or ``AsyncOp`` for work that
/// finishes later (a callback, another thread, `async` code).
///
/// An operation is one-shot: it is started once, by its queue
/// (``OpQueue/addOperation(_:)-(Op)``) or by calling ``start()`` yourself, and then it is
/// finished for good.
///
/// ```swift
/// final class Resize: Op, @unchecked Sendable {
///     let image: Image
///     private(set) var result: Image?
///     init(_ image: Image) { self.image = image }
///     override func main() {
///         guard !isCancelled else { return }
///         result = image.resized(to: 256)
///     }
/// }
/// ```
///
/// - Important: `Op` is `@unchecked Sendable`: all of its own state is guarded by a lock (one of
///   the library's striped locks) or atomics, so it may be used from any thread. State that a
///   subclass adds is the subclass's responsibility, as with Foundation's `Operation`; the queue
///   publishes everything written before ``main()`` starts to the thread that runs it, and
///   everything written in `main()` to the completion block, to dependents and to waiters.
open class Op: @unchecked Sendable, CustomStringConvertible {
    // @unchecked Sendable: `machine`, `storedName`, `storedQualityOfService` and `registry` are
    // read and written only with the operation's stripe of `LockTable` held; `flags` is an atomic
    // mirror of the machine for lock-free reads; `queueSlot`, `epoch` and `isBarrier` belong to
    // the queue the operation is in and are only touched with that queue's lock held.

    @exclusivity(unchecked) final var machine = OpStateMachine()
    final let flags = Atomic<UInt8>(Flags.ready)
    final let isAsynchronousStorage: Bool
    /// The order of creation, used to make cycle detection on new dependencies cheap.
    final let serial: UInt64 = Op.serialCounter.add(1, ordering: .relaxed).newValue
    /// Relaxed: serial numbers only need to be unique.
    private static let serialCounter = Atomic<UInt64>(0)

    /// The operation's position in its queue's member list (queue lock).
    @exclusivity(unchecked) final var queueSlot = -1
    /// How many barriers of its queue were added before the operation (queue lock).
    @exclusivity(unchecked) final var epoch = 0
    /// Whether the queue treats the operation as a barrier (set before it is enqueued).
    @exclusivity(unchecked) final var isBarrier = false
    /// Whether the operation's queue holds a live (not stale) ready-list entry for it (queue lock).
    @exclusivity(unchecked) final var hasLiveReadyEntry = false
    /// The ticket of that entry; entries with other tickets are stale (queue lock).
    @exclusivity(unchecked) final var readyTicket: UInt32 = 0

    enum Flags {
        static let cancelled: UInt8 = 1 << 0
        static let executing: UInt8 = 1 << 1
        static let finished: UInt8 = 1 << 2
        static let ready: UInt8 = 1 << 3
    }

    /// Creates an operation that runs ``main()`` synchronously when started.
    public init() {
        isAsynchronousStorage = false
    }

    /// Creates an operation that stays executing after its body returns, until it calls finish.
    init(asynchronous: Bool) {
        isAsynchronousStorage = asynchronous
    }

    deinit {
        for dependentSerial in machine.waitingDependentSerials {
            DependencyCycles.backwardEdgeResolved(dependentSerial: dependentSerial, dependencySerial: serial)
        }
        // An operation keeps its dependencies alive; releasing the last operation of a long chain
        // recursively would overflow the stack, so its dependencies are released iteratively.
        var dependencies = machine.takeDependencies()
        ReleaseTrampoline.release(&dependencies)
    }

    // MARK: Work

    /// Performs the operation's synchronous work. Override it in a subclass; do not call `super`.
    ///
    /// It runs on the thread that called ``start()``, which for an operation in a queue is one of
    /// the library's worker threads (or the queue's ``OpQueue/underlyingQueue``). Check
    /// ``isCancelled`` before starting the work and regularly during it, and return early when it
    /// is `true`. When `main()` returns, the operation is finished.
    ///
    /// Errors of the work are not thrown out of `main()`: store them in the operation (or use
    /// ``InvocationOp``, whose `result` carries them) and let dependents or the completion block
    /// read them.
    open func main() {}

    /// Runs the operation now, on the calling thread.
    ///
    /// If the operation was cancelled, it skips ``main()`` and becomes finished at once. If it is
    /// already finished, `start()` does nothing. For a synchronous operation, `start()` returns
    /// once `main()` has returned and the operation is finished; an ``AsyncOp`` is still executing
    /// when `start()` returns.
    ///
    /// - Important: It is a programmer error, and traps, to call `start()` on an operation that is
    ///   in a queue (the queue starts it), that is executing, or that is not ready (a dependency has
    ///   not finished; check ``isReady`` first).
    public final func start() {
        switch transition({ $0.startManually() }) {
        case .run:
            Op.currentOperation.withValue(self) {
                main()
            }
            if !isAsynchronousStorage {
                performFinish(transition { $0.finish() }, releasesSlot: false)
            }
        case .finishWithoutRunning(let finish):
            performFinish(finish, releasesSlot: true)
        case .ignore:
            return
        case .skip:
            preconditionFailure("Internal inconsistency: a manual start was skipped for \(self)")
        case .misuse(let misuse):
            trap(misuse)
        }
    }

    /// What happened when a queue tried to start the operation.
    enum QueueRunOutcome {
        /// The operation ran (or was cancelled) and is finished; its slot can be reused. If it is
        /// also finished for good (no completion block), the drainer removes it from the queue.
        case finishedSynchronously(OpQueueCompletion?)
        /// An asynchronous operation is executing; it gives its slot back when it finishes.
        case continuesAsynchronously
        /// The ready-list entry was stale; the slot can be reused.
        case skipped
    }

    /// Starts the operation on behalf of its queue, from a ready-list entry carrying `ticket`.
    final func runFromQueue(ticket: UInt32) -> QueueRunOutcome {
        switch transition({ $0.startFromQueue(ticket: ticket) }) {
        case .run:
            OpQueue.currentQueue.value?.noteStarted(self)
            Op.currentOperation.withValue(self) {
                main()
            }
            if isAsynchronousStorage {
                return .continuesAsynchronously
            }
            return .finishedSynchronously(performFinish(transition { $0.finish() }, releasesSlot: false, inDrainer: true))
        case .finishWithoutRunning(let finish):
            OpQueue.currentQueue.value?.noteStarted(self)
            return .finishedSynchronously(performFinish(finish, releasesSlot: false, inDrainer: true))
        case .skip:
            return .skipped
        case .ignore, .misuse:
            preconditionFailure("Internal inconsistency: a queue start of \(self) was refused")
        }
    }

    // MARK: State

    /// Whether the operation has been cancelled. Cheap enough to poll in a tight loop.
    ///
    /// Observable with ``observe(_:options:changeHandler:)``.
    public final var isCancelled: Bool {
        flags.load(ordering: .acquiring) & Flags.cancelled != 0
    }

    /// Whether the operation is running its work now.
    public final var isExecuting: Bool {
        flags.load(ordering: .acquiring) & Flags.executing != 0
    }

    /// Whether the operation has finished, by completing its work or by being cancelled.
    public final var isFinished: Bool {
        flags.load(ordering: .acquiring) & Flags.finished != 0
    }

    /// Whether the operation can start now: every dependency has finished (or the operation was
    /// cancelled, which makes it ignore its dependencies so that it can finish quickly).
    public final var isReady: Bool {
        flags.load(ordering: .acquiring) & Flags.ready != 0
    }

    /// Why the operation failed, or `nil`.
    ///
    /// An operation on a dependency cycle is ended with a ``DependencyCycleError`` here (it is
    /// also cancelled, so its body does not run). Observable with ``observe(_:options:changeHandler:)``.
    public final var error: (any Error)? {
        withState { $0.error }
    }

    /// Whether the operation runs asynchronously with respect to the thread that starts it:
    /// `true` for ``AsyncOp``, `false` otherwise.
    public final var isAsynchronous: Bool { isAsynchronousStorage }

    /// The older name of ``isAsynchronous``, kept for code ported from Foundation.
    public final var isConcurrent: Bool { isAsynchronousStorage }

    /// A name for the operation, used in diagnostics and error messages.
    public final var name: String? {
        get { withState { $0.name } }
        set { withState { $0.name = newValue } }
    }

    /// The importance of the work, as a Dispatch quality-of-service class.
    ///
    /// The default is `.default`. The `Task` that runs an ``AsyncOp``'s `async` body gets the
    /// matching priority; the library's worker pool otherwise runs all work alike (see
    /// ``OpQueue/qualityOfService`` for the queue's setting).
    public final var qualityOfService: DispatchQoS.QoSClass {
        get { withState { $0.qualityOfService } }
        set { withState { $0.qualityOfService = newValue } }
    }

    /// Where the operation's queue starts it among the operations that are ready together.
    ///
    /// Changing the priority of an operation that waits in a queue moves it at once.
    public final var queuePriority: QueuePriority {
        get { withState { $0.priority } }
        set { performReadiness(transition { $0.setPriority(newValue) }) }
    }

    /// A closure run once, after the operation finishes (whether it ran or was cancelled).
    ///
    /// It runs asynchronously, as a job of its own on a worker thread, never inline on the thread
    /// that finished the operation; it is set back to `nil` when it starts. Dependents may start
    /// before it runs. ``waitUntilFinished()-2def2`` and the queue's waits return only after it has
    /// returned.
    public final var completionBlock: (@Sendable () -> Void)? {
        get { withState { $0.completionBlock } }
        set {
            // The old block is released after unlocking: releasing it may run deinit code.
            let old = transition { machine in
                let old = machine.completionBlock
                machine.setCompletionBlock(newValue)
                record(.completionBlock, old: old as Any, new: newValue as Any)
                return old
            }
            withExtendedLifetime(old) {}
        }
    }

    /// Signals that the work should stop.
    ///
    /// A pending operation becomes ready (it ignores its dependencies) and, when started, finishes
    /// without running its body; its dependents then start as usual. A running operation keeps
    /// running: its body should check ``isCancelled`` and return early. Cancelling a finished
    /// operation does nothing.
    open func cancel() {
        let action = transition { $0.cancel() }
        guard action.didCancel else { return }
        if action.wasExecuting {
            didCancelWhileExecuting()
        }
        performReadiness(action.readiness)
    }

    /// Called once, after the lock is released, when an executing operation is cancelled.
    func didCancelWhileExecuting() {}

    /// Blocks the calling thread until the operation is finished and its completion block has
    /// returned.
    ///
    /// - Important: A wait that could never return traps with an explanation instead of freezing:
    ///   waiting from inside the operation itself, from an operation of a width-1 queue on an
    ///   operation waiting in the same queue, from an operation on an operation that depends on it,
    ///   or from the main thread on an operation of ``OpQueue/main``.
    ///
    /// From `async` code use the `async` overload, which suspends instead of blocking a thread.
    @available(*, noasync, message: "Use `await waitUntilFinished()`, which suspends instead of blocking a thread")
    public final func waitUntilFinished() {
        // Finished for good, or finished and running its completion block on this very thread
        // (it would otherwise wait for itself).
        if withState({ $0.lifecycle == .finished }) || Op.completingOperation.value === self { return }
        WaitDeadlocks.checkWait(for: self)
        DependencyCycles.checkBeforeWaiting(for: self)
        let semaphore = DispatchSemaphore(value: 0)
        let registered = withState { $0.addWaiter { semaphore.signal() } }
        if registered {
            semaphore.wait()
        }
    }

    /// Registers `waiter` to be called once the operation is finished for good, or calls it now.
    final func onCompletion(_ waiter: @escaping @Sendable () -> Void) {
        if !withState({ $0.addWaiter(waiter) }) {
            waiter()
        }
    }

    // MARK: Description

    /// The operation's class and its name (or address), for diagnostics.
    open var description: String {
        let typeName = String(describing: type(of: self))
        if let name {
            return "\(typeName) \"\(name)\""
        }
        return "\(typeName) \(ObjectIdentifier(self).debugDescription.dropFirst("ObjectIdentifier(".count).dropLast())"
    }

    // MARK: Thread context

    /// The operation whose body the calling thread is running, if any.
    static let currentOperation = ThreadLocal<Op>()

    /// The operation whose completion block the calling thread is running, if any.
    static let completingOperation = ThreadLocal<Op>()
}

// MARK: - Storage helpers

extension Op {
    /// Runs `body` on the state with the operation's lock held.
    @inline(__always)
    final func withState<Result>(_ body: (inout OpStateMachine) -> Result) -> Result {
        let stripe = LockTable.stripe(for: self)
        LockTable.lock(stripe)
        defer {
            #if OPERATIONS_INTERNAL_CHECKS
            machine.checkInvariants()
            #endif
            LockTable.unlock(stripe)
        }
        return body(&machine)
    }

    /// Runs a transition with the lock held, publishes the new flags, queues the resulting
    /// observable changes, and delivers them once the lock is released.
    @inline(__always)
    @discardableResult
    final func transition<Result>(_ body: (inout OpStateMachine) -> Result) -> Result {
        let stripe = LockTable.stripe(for: self)
        LockTable.lock(stripe)
        let result = transitionLocked(body)
        let registry = machine.registry
        LockTable.unlock(stripe)
        registry?.deliver(to: self)
        return result
    }

    /// The body of ``transition(_:)``, for callers that already hold the lock (two-operation
    /// transitions). The caller delivers with ``deliverChanges()`` after unlocking.
    @inline(__always)
    final func transitionLocked<Result>(_ body: (inout OpStateMachine) -> Result) -> Result {
        let before = flags.load(ordering: .relaxed)
        let priorityBefore = Op.priority(of: &machine)
        // Everything is read through one inout access: reading the machine's computed properties
        // through the stored property would copy the whole struct (and retain its references).
        return Op.apply(body, to: &machine) { machine, result in
            #if OPERATIONS_INTERNAL_CHECKS
            machine.checkInvariants()
            #endif
            let after = machine.flags
            if after != before {
                flags.store(after, ordering: .releasing)
            }
            if let registry = machine.registry, !registry.isEmpty {
                recordFlagChanges(before: before, after: after, priorityAfter: machine.priority,
                                  priorityBefore: registry.observes(OpProperty.queuePriority.rawValue) ? priorityBefore : nil,
                                  into: registry)
            }
        }
    }

    final func deliverChanges() {
        let registry = withState { $0.registry }
        registry?.deliver(to: self)
    }

    /// Runs `body` on `machine`, then `after` with the machine and the result, in one access.
    @inline(__always)
    private static func apply<Result>(
        _ body: (inout OpStateMachine) -> Result,
        to machine: inout OpStateMachine,
        after: (inout OpStateMachine, Result) -> Void
    ) -> Result {
        let result = body(&machine)
        after(&machine, result)
        return result
    }

    @inline(__always)
    private static func priority(of machine: inout OpStateMachine) -> QueuePriority {
        machine.priority
    }

    private final func recordFlagChanges(before: UInt8, after: UInt8, priorityAfter: QueuePriority,
                                         priorityBefore: QueuePriority?, into registry: ObserverRegistry) {
        let changed = before ^ after
        func recordFlag(_ flag: UInt8, _ property: OpProperty) {
            if changed & flag != 0 {
                registry.record(property: property.rawValue, oldValue: before & flag != 0, newValue: after & flag != 0)
            }
        }
        recordFlag(Flags.cancelled, .isCancelled)
        recordFlag(Flags.executing, .isExecuting)
        recordFlag(Flags.finished, .isFinished)
        recordFlag(Flags.ready, .isReady)
        if let priorityBefore, priorityAfter != priorityBefore {
            registry.record(property: OpProperty.queuePriority.rawValue, oldValue: priorityBefore, newValue: priorityAfter)
        }
    }

    /// Queues a change of a property that is not a flag. Call with the lock held.
    final func record(_ property: OpProperty, old: Any, new: Any) {
        machine.registry?.record(property: property.rawValue, oldValue: old, newValue: new)
    }

    /// The registry, created on first use. Call with the lock held.
    final func registryCreatingIfNeeded() -> ObserverRegistry {
        machine.ensureRegistry()
    }

    /// Performs a readiness action: puts the operation on its queue's ready list.
    @inline(__always)
    final func performReadiness(_ action: OpStateMachine.ReadinessAction) {
        switch action {
        case .none:
            return
        case .schedule(let queue, let schedule):
            queue.schedule(self, schedule)
        }
    }

    /// Performs everything that follows the end of execution, outside every lock: dependents
    /// learn that this operation finished, the queue gets its slot back (unless the draining
    /// worker does that itself), the completion block runs, and waiters are released.
    ///
    /// With `inDrainer`, an operation that is finished for good at once (no completion block) does
    /// not leave its queue here: the drainer does that with its next lock acquisition, and this
    /// returns what it needs.
    @discardableResult
    final func performFinish(_ finish: OpStateMachine.FinishAction, releasesSlot: Bool,
                             inDrainer: Bool = false) -> OpQueueCompletion? {
        var resolvedBackwardEdges = 0
        if let first = finish.firstDependent, first.serial < serial { resolvedBackwardEdges += 1 }
        for dependent in finish.otherDependents where dependent.serial < serial { resolvedBackwardEdges += 1 }
        for dependentSerial in finish.releasedDependentSerials where dependentSerial < serial { resolvedBackwardEdges += 1 }
        DependencyCycles.backwardEdgesResolved(resolvedBackwardEdges)
        if finish.firstDependent != nil {
            notifyDependents(finish, releasesSlot: releasesSlot)
        }
        if releasesSlot, let queue = finish.queue {
            queue.releaseSlot(of: self)
        }
        if finish.hasCompletionBlock {
            let block = transition { machine in
                let block = machine.takeCompletionBlock()
                record(.completionBlock, old: block as Any, new: Optional<@Sendable () -> Void>.none as Any)
                return block
            }
            if let block {
                WorkerPool.shared.submit { [self] in
                    Op.completingOperation.withValue(self) {
                        block()
                    }
                    complete()
                }
                return nil
            }
        }
        if inDrainer, finish.queue != nil {
            // The drainer removes it from the queue, then calls `completeAfterLeaving()`.
            return OpQueueCompletion(operation: self)
        }
        complete()
        return nil
    }

    /// Tells the dependents that this operation finished; those that become ready together are
    /// pushed on their queues together, so that a queue starts the highest priority among them first.
    private final func notifyDependents(_ finish: OpStateMachine.FinishAction, releasesSlot: Bool) {
        // A drainer that will ask its queue for the next operation right after this need not
        // have another drainer requested for the dependents that become ready here.
        OpQueue.pollingQueue.withValue(releasesSlot ? nil : finish.queue) {
            if finish.otherDependents.isEmpty, let dependent = finish.firstDependent {
                dependent.performReadiness(dependent.transition { $0.dependencyFinished() })
                return
            }
            var ready: [(operation: Op, queue: OpQueue, schedule: OpStateMachine.Schedule)] = []
            for dependent in finish.dependents {
                if case .schedule(let queue, let schedule) = dependent.transition({ $0.dependencyFinished() }) {
                    ready.append((dependent, queue, schedule))
                }
            }
            OpQueue.scheduleTogether(ready)
        }
    }

    /// The drainer removed the operation from its queue: it is finished for good; release the
    /// waiters.
    final func completeAfterLeaving() {
        let (waiters, _) = withState { $0.completed() }
        for waiter in waiters {
            waiter()
        }
    }

    /// The operation is finished for good: leave the queue, then release the waiters (so that a
    /// waiter sees the queue without the operation).
    final func complete() {
        let (waiters, queue) = withState { $0.completed() }
        queue?.operationDidLeave(self)
        for waiter in waiters {
            waiter()
        }
    }
}
