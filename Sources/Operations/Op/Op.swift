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
/// Operations are `Equatable` and `Hashable` by identity, as `NSObject`s are: two references are
/// equal when they name the same operation, so `Set<Op>` and `operations.contains(op)` work.
///
/// - Important: `Op` is `@unchecked Sendable`: all of its own state is guarded by a lock (one of
///   the library's striped locks) or atomics, so it may be used from any thread. State that a
///   subclass adds is the subclass's responsibility, as with Foundation's `Operation`; the queue
///   publishes everything written before ``main()`` starts to the thread that runs it, and
///   everything written in `main()` to the completion block, to dependents and to waiters.
open class Op: @unchecked Sendable, CustomStringConvertible {
    // @unchecked Sendable: `machine` (and the rarely used state it keeps in its extras) is read
    // and written only with the operation's stripe of `LockTable` held; `flags` is an atomic
    // mirror of the machine for lock-free reads; `membership` belongs to the queue the operation
    // is in and is only touched with that queue's lock held (see `QueueMembership`); the other
    // stored properties are immutable.

    // Dynamic exclusivity checks are off for the lock-guarded state in normal builds: the lock
    // already serializes every access, and the checks would cost as much as the lock on the hot
    // path. They would still catch an overlapping access within one thread (a transition that
    // reaches back into the state it is changing), so the checked build
    // (`-D OPERATIONS_INTERNAL_CHECKS`, run by CI) turns them back on.
    //
    // The order of the stored properties keeps the object small: the one-byte fields fill the
    // padding after the machine (a pending `BlockOp` is 88 bytes with its header; see
    // `PendingOperationSizeTests`): three of them fit before the serial number, a fourth would
    // push it, and the object, 8 bytes further (into the next malloc size class).
    #if OPERATIONS_INTERNAL_CHECKS
    final var machine = OpStateMachine()
    #else
    @exclusivity(unchecked) final var machine = OpStateMachine()
    #endif
    final let flags = Atomic<UInt8>(Flags.ready)
    final let isAsynchronousStorage: Bool
    /// Facts that are set once and never cleared, one bit each (see ``Marks``): one byte for all
    /// of them keeps the one-byte fields within the padding after the machine.
    final let marks = Atomic<UInt8>(0)
    /// The order of creation, used to make cycle detection on new dependencies cheap.
    final let serial: UInt64 = Op.serialCounter.add(1, ordering: .relaxed).newValue
    #if OPERATIONS_INTERNAL_CHECKS
    final var membership = QueueMembership()
    #else
    @exclusivity(unchecked) final var membership = QueueMembership()
    #endif
    /// Relaxed: serial numbers only need to be unique.
    private static let serialCounter = Atomic<UInt64>(0)

    /// The bits of ``flags``.
    enum Flags {
        static let cancelled: UInt8 = 1 << 0
        static let executing: UInt8 = 1 << 1
        static let finished: UInt8 = 1 << 2
        static let ready: UInt8 = 1 << 3
        /// Not observable: the operation ever had a dependency (see ``settleDependencies()``).
        static let hadDependencies: UInt8 = 1 << 4
        /// Not observable: the operation has ``OpObserver``s to tell when it starts and finishes.
        static let observed: UInt8 = 1 << 5
        /// Not observable: conditions or exclusivity stand between readiness and the ready list.
        static let gated: UInt8 = 1 << 6
        /// Not observable: instruments (a trace recording, distributed tracing) saw the operation
        /// enqueued or started, and hear of its finish.
        static let instrumented: UInt8 = 1 << 7
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
        // Most operations never had a dependency or a dependent: one load tells (reading the
        // machine's computed properties here would copy it, retaining each of its references).
        guard let links = machine.links else { return }
        if !links.dependents.isEmpty {
            for dependentSerial in links.dependents.serials {
                DependencyCycles.backwardEdgeResolved(dependentSerial: dependentSerial, dependencySerial: serial)
            }
        }
        // An operation keeps its dependencies alive; releasing the last operation of a long chain
        // recursively would overflow the stack, so its dependencies are released iteratively.
        if machine.hasHadDependencies {
            detachFromUnfinishedDependencies()
            var dependencies = machine.takeDependencies()
            ReleaseTrampoline.release(&dependencies)
        }
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

    // MARK: Settings

    /// A name for the operation, used in diagnostics and error messages.
    public final var name: String? {
        get { withState { $0.name } }
        set { withState { $0.name = newValue } }
    }

    /// The importance of the work, as a Dispatch quality-of-service class.
    ///
    /// The default is `.default`. The `Task` that runs an ``AsyncOp``'s `async` body gets the
    /// matching priority; the library's worker pool orders its work by the queue's class (see
    /// ``OpQueue/qualityOfService``).
    public final var qualityOfService: DispatchQoS.QoSClass {
        get { withState { $0.qualityOfService } }
        set { withState { $0.qualityOfService = newValue } }
    }

    /// The thread priority for ``main()``, from 0.0 to 1.0 (0.5 by default), kept so that code
    /// ported from Foundation compiles.
    ///
    /// Apple deprecated it in favour of ``qualityOfService``. The library keeps the value but
    /// does not apply it: its worker pool runs all work at one thread priority.
    @available(*, deprecated, message: "Use qualityOfService; threadPriority is kept but has no effect")
    public final var threadPriority: Double {
        get { withState { $0.threadPriority } }
        set { withState { $0.threadPriority = newValue } }
    }

    /// Where the operation's queue starts it among the operations that are ready together.
    ///
    /// Changing the priority of an operation that waits in a queue moves it at once.
    public final var queuePriority: QueuePriority {
        get { withState { $0.priority } }
        set {
            let (action, registry) = transitionDeferringDelivery { $0.setPriority(newValue) }
            performReadiness(action)
            deliver(registry)
        }
    }

    /// A closure run once, after the operation finishes (whether it ran or was cancelled).
    ///
    /// It runs asynchronously, as a job of its own on a worker thread, never inline on the thread
    /// that finished the operation; it is set back to `nil` when it starts. Dependents may start
    /// before it runs. ``waitUntilFinished()-2def2`` and the queue's waits return only after it has
    /// returned.
    ///
    /// Setting it once the operation reads as finished has no effect: the new block never runs,
    /// and it is released at once (so a block that captures the operation leaks nothing).
    public final var completionBlock: (@Sendable () -> Void)? {
        get { withState { $0.completionBlock } }
        set {
            // The replaced block, or a refused new one, is released after unlocking: releasing it
            // may run deinit code.
            let released = transition { machine in
                let old = machine.completionBlock
                guard machine.setCompletionBlock(newValue) else { return newValue }
                machine.record(.completionBlock, old: old as Any, new: newValue as Any)
                return old
            }
            withExtendedLifetime(released) {}
        }
    }

    // MARK: Cancelling

    /// Signals that the work should stop.
    ///
    /// A pending operation becomes ready (it ignores its dependencies) and, when started, finishes
    /// without running its body; its dependents then start as usual. A running operation keeps
    /// running: its body should check ``isCancelled`` and return early. Cancelling a finished
    /// operation does nothing.
    open func cancel() {
        // Observers hear of the cancellation once it has taken effect (see
        // `transitionDeferringDelivery`): an observer that waits for the operation then does not
        // keep it from being scheduled, or its task from being cancelled.
        // `didCancel` takes its place among the observers' events inside the transition, so that
        // it comes before the finish it may cause; it is delivered with the other changes.
        typealias Cancelled = (OpStateMachine.CancelAction, ObserverRegistry?, OpStateMachine.GateWork?)
        let ((action, observers, gateWork), registry) = transitionDeferringDelivery { machine -> Cancelled in
            let action = machine.cancel()
            guard action.didCancel else { return (action, nil, nil) }
            return (action, machine.observers?.queuing(.didCancel(error: machine.error)), machine.gateWorkToCancel())
        }
        if action.didCancel {
            // The work started to pass its gates stops: the task evaluating its `async`
            // conditions is cancelled, its exclusivity request withdrawn, and a `start()` called
            // by hand that waits is woken.
            gateWork?.stop(for: self)
            if action.wasExecuting {
                didCancelWhileExecuting()
            }
            performReadiness(action.readiness)
        }
        deliver(registry)
        observers?.deliverQueued(from: self)
    }

    /// Called once, after the lock is released, when an executing operation is cancelled.
    func didCancelWhileExecuting() {}

    /// The synchronous part of an asynchronous operation's body (``main()``) returned, outside
    /// the body, while the operation has observers: an ``AsyncOp`` whose body is its `execute()`
    /// tells them `didExecute` (see ``OpObserver/didExecute(_:)``).
    func synchronousPartReturned() {}

    /// Whether starting the operation runs only the library's own code, which sets the work going
    /// and returns at once (the `execute()` of an ``AsyncOp`` made with a closure starts a task):
    /// a queue may then start it from a thread of Swift's cooperative pool, where nothing may
    /// block (see ``OpQueue/drainStartsHere()``). Never true where a user's override runs.
    var startsBriefly: Bool { false }

    // MARK: Description

    /// The operation's class and its name (or address), for diagnostics.
    open var description: String {
        let typeName = String(describing: type(of: self))
        if let name {
            return "\(typeName) \"\(name)\""
        }
        return "\(typeName) \(ObjectIdentifier(self).debugDescription.dropFirst("ObjectIdentifier(".count).dropLast())"
    }
}
