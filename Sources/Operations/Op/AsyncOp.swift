/// An operation whose work finishes after its body returns: `async` code, a callback, another
/// thread, an event. The library keeps its state and notifications right.
///
/// There are three ways to write one.
///
/// **A closure.** Pass an `async` closure; it runs in a Swift `Task` and the operation finishes
/// when it returns or throws:
///
/// ```swift
/// let fetch = AsyncOp { try await client.download(url) }
/// ```
///
/// **An `async` subclass.** Override ``execute()-9zoa`` (the `async throws` one):
///
/// ```swift
/// final class Fetch: AsyncOp, @unchecked Sendable {
///     let url: String
///     init(url: String) {
///         self.url = url
///         super.init()
///     }
///     override func execute() async throws {
///         try await client.download(url)
///     }
/// }
/// ```
///
/// **A callback subclass.** Foundation makes you override `start`, `isExecuting`, `isFinished` and
/// `isAsynchronous` and post KVO notifications by hand. Here you override the synchronous
/// ``execute()-3w8hx`` to start the work, and call ``finish()`` exactly once, from any thread, when
/// it is done:
///
/// ```swift
/// final class Download: AsyncOp, @unchecked Sendable {
///     let url: String
///     init(url: String) {
///         self.url = url
///         super.init()
///     }
///     override func execute() {
///         client.fetch(url) { _ in self.finish() }
///     }
/// }
/// ```
///
/// In every case the operation is executing from the moment its work starts until it finishes,
/// and it holds its slot of the queue's ``OpQueue/maxConcurrentOperationCount`` all that time. A
/// cancelled `AsyncOp` that never started does not run its work: it goes straight to finished.
///
/// **Cancellation.** Cancelling the operation (or its queue's ``OpQueue/cancelAllOperations()``)
/// cancels the `Task` that runs an `async` body, so `Task.isCancelled` and
/// `try Task.checkCancellation()` see it. A callback-style operation checks ``Op/isCancelled``.
///
/// **Errors.** An error thrown by the `async` body, or passed to ``finish(throwing:)``, is kept in
/// ``Op/error``. ``AsyncBlockOp`` also keeps the value the body returns.
///
/// **Task name.** The task of an `async` body is named after the operation: inside the body,
/// `Task.name` is the operation's ``Op/name`` as it was when the operation started (`nil` for an
/// operation without a name), so that debuggers and task dumps show which operation a task
/// serves:
///
/// ```swift
/// let sync = AsyncOp { print(Task.name ?? "unnamed") }   // prints "sync contacts"
/// sync.name = "sync contacts"
/// queue.addOperation(sync)
/// ```
///
/// **Priority.** The task of an `async` body runs with the priority that matches the operation's
/// ``Op/qualityOfService``, one step higher within that class for a `.high` or `.veryHigh`
/// ``Op/queuePriority`` and one step lower for a `.low` or `.veryLow` one.
///
/// - Important: Calling `finish()` twice, or before the work started, is a programmer error and traps.
open class AsyncOp: Op, @unchecked Sendable {
    // @unchecked Sendable: `task` is guarded by the operation's stripe lock; `body` is immutable.

    private let body: (@Sendable () async throws -> Void)?
    /// Whether ``main()``'s call of `execute()` reached the default one, which runs the `async`
    /// body in a task (written and read only by the thread that runs ``main()``).
    private var startsAsyncBody = false
    private final var task: Task<Void, Never>?

    /// Creates an asynchronous operation; override one of the `execute()` methods.
    public override init() {
        body = nil
        super.init(asynchronous: true)
    }

    /// Creates an operation that runs `body` in a Swift `Task` and finishes when it returns or
    /// throws (the error is kept in ``Op/error``).
    public init(_ body: @escaping @Sendable () async throws -> Void) {
        self.body = body
        super.init(asynchronous: true)
    }

    /// Starts the work. Override it for callback-style work, and call ``finish()`` when the work
    /// is done; do not call `super`.
    ///
    /// It is called where ``main()`` is: on the thread that started the operation, which for an
    /// operation in a queue is a thread of the library's worker pool (or the queue's
    /// ``OpQueue/underlyingQueue``), never one of Swift's cooperative pool. It may return before
    /// the work is done. The default implementation runs the `async` ``execute()-9zoa`` in a
    /// `Task` and finishes the operation when it returns.
    open func execute() {
        startsAsyncBody = true
        // One lock for the three: the task's priority, and its name (``Op/name``).
        let (qualityOfService, queuePriority, name) = withState { ($0.qualityOfService, $0.priority, $0.name) }
        let priority = TaskPriority(qualityOfService, queuePriority: queuePriority)
        // Where the thread hands off (see `OpQueue.drainStartsHere()`), the task's first job is
        // kept to run on this thread next.
        let context = ThreadContext.current
        if case .open = context.pointee.taskHandOff {
            context.pointee.taskHandOff = .claiming
        }
        defer {
            if case .claiming = context.pointee.taskHandOff {
                context.pointee.taskHandOff = .open
            }
        }
        let task: Task<Void, Never>
        #if compiler(>=6.2)
        if let name, #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
            // Named after the operation: `Task.name` in the body is its `name`. An unnamed one
            // takes the plain initializer (its task has no name), which costs less.
            task = Task(name: name, executorPreference: OpTaskExecutor.shared, priority: priority) { [self] in
                await runBody()
            }
        } else {
            task = Task(executorPreference: OpTaskExecutor.shared, priority: priority) { [self] in
                await runBody()
            }
        }
        #else
        _ = name
        task = Task(executorPreference: OpTaskExecutor.shared, priority: priority) { [self] in
            await runBody()
        }
        #endif
        if keep(task) {
            task.cancel()
        }
    }

    /// Runs the `async` body in the task that ``execute()-3w8hx`` started, and finishes the
    /// operation when it returns or throws.
    @inline(__always)
    private final func runBody() async {
        let failure: (any Error)? = await Op.$currentTaskOperation.withValue(self) {
            if isCancelled {
                // Cancelled before the body started (the handle may not be stored yet).
                withUnsafeCurrentTask { $0?.cancel() }
            }
            do {
                try await self.execute()
                return nil
            } catch {
                return error
            }
        }
        // Finished outside the body's task-local binding: the tasks of the operations this
        // finish starts (see `OpQueue.drainStartsHere()`) then have no binding to copy.
        if let failure {
            keepFailure(failure)
        }
        finish(inOwnTask: true)
    }

    /// Keeps the task that runs the `async` body, so that cancelling the operation cancels it;
    /// returns whether the operation is cancelled already. A task that finished the operation
    /// before this call is not kept.
    final func keep(_ task: Task<Void, Never>) -> Bool {
        withState { machine in
            if machine.lifecycle == .executing {
                self.task = task
            }
            return machine.isCancelled
        }
    }

    /// Whether the operation holds the task of its `async` body (for tests).
    final var holdsTask: Bool {
        withState { _ in task != nil }
    }

    /// The `async` work. Override it in a subclass, or pass a closure to ``init(_:)``; the
    /// operation finishes when it returns, and keeps the error in ``Op/error`` if it throws.
    ///
    /// It runs in a `Task` whose priority matches ``Op/qualityOfService``, on the library's own
    /// threads (``OpTaskExecutor``), not on Swift's cooperative pool; cancelling the operation
    /// cancels the task.
    open func execute() async throws {
        try await body?()
    }

    /// Calls ``execute()-3w8hx``; an asynchronous operation's work starts there.
    public final override func main() {
        startsAsyncBody = false
        execute()
    }

    /// A body that is `execute()` itself (a callback-style operation) returned: its observers
    /// hear `didExecute` now, outside the body (a callback that waits for the operation then
    /// waits, as from any other thread). An `async` body's hear it when that body returns, with
    /// the finish.
    final override func synchronousPartReturned() {
        if !startsAsyncBody {
            observersDidExecute()
        }
    }

    /// Marks the operation finished. Call it exactly once, from any thread, when the work is done
    /// (or has stopped because the operation was cancelled).
    public final func finish() {
        finish(inOwnTask: Op.currentTaskOperation === self)
    }

    /// Finishes the operation; `inOwnTask` when called from the task of its `async` body.
    private final func finish(inOwnTask: Bool) {
        if flags.load(ordering: .relaxed) & Flags.observed != 0, isExecuting {
            observersWillFinish()
        }
        switch lifecycleTransition({ $0.requestFinish() }) {
        case .success(let finish):
            withState { _ in task = nil }
            // From the task of its own `async` body, the queue's next operations may start right
            // here, without a hop to the worker pool.
            performFinish(finish, releasesSlot: true, inOwnTask: inOwnTask)
        case .failure(let error):
            trap(error.misuse)
        }
    }

    /// Marks the operation finished because its work failed with `error`, which is kept in
    /// ``Op/error``. Call it instead of ``finish()``, exactly once.
    public final func finish(throwing error: any Error) {
        keepFailure(error)
        finish()
    }

    /// Keeps `error` as the operation's ``Op/error``, while it executes (see
    /// ``finish(throwing:)``).
    private final func keepFailure(_ error: any Error) {
        transition { machine in
            guard machine.lifecycle == .executing else { return }
            machine.endTimeout()   // the work is over: no timer touches the operation from now on
            let old = machine.error
            machine.recordError(error)
            machine.record(.error, old: old as Any, new: machine.error as Any)
        }
    }

    /// Cancels the operation and, if it is running an `async` body, the body's task.
    ///
    /// Called from the body itself, the task is cancelled before `cancel()` returns, so the body's
    /// next `Task.isCancelled` sees it.
    open override func cancel() {
        super.cancel()
        if Op.currentTaskOperation === self {
            // From its own body (even if another thread cancelled first and is about to cancel the
            // task): cancel the current task directly.
            withUnsafeCurrentTask { $0?.cancel() }
        }
    }

    /// Whether starting it runs the library's own `execute()`, which only starts the task of the
    /// `async` body: true for an `AsyncOp` made with a closure (and for the library's subclasses
    /// that say so). A subclass may override the synchronous `execute()` with any code, blocking
    /// code included, which must run where ``main()`` runs, on a thread of the worker pool (or
    /// the queue's underlying queue): the library cannot tell from here whether a subclass made
    /// outside the module overrides it, so it starts every such subclass there.
    override var startsBriefly: Bool { type(of: self) == AsyncOp.self }

    /// Cancels the task of a running `async` body.
    override func didCancelWhileExecuting() {
        // The stored task; if it is not stored yet, `execute()` cancels it as soon as it stores it,
        // and the body cancels itself when it starts.
        withState { _ in task }?.cancel()
    }
}
