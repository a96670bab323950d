import OperationsRuntimeShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What the calling thread is doing for the library: which operation's body it runs, which
/// queue it drains, whose completion block or observers it calls, and so on.
///
/// One context per thread, found through a C thread-local variable on Linux (a thread-specific
/// key elsewhere), so that entering and leaving a scope costs two plain stores. Every field is
/// read and written only by the thread the context belongs to. The objects it names are
/// unretained: the caller of each `with…` scope keeps them alive for its duration.
///
/// The wait-deadlock checks read it to learn what the calling thread holds up: an operation
/// whose body runs here cannot finish, one whose observers run here cannot move to its next
/// state, and so on, until the thread returns (see ``WaitDeadlocks``).
struct ThreadContext {
    /// The operation whose body the thread runs (`main()`, or a block of a ``BlockOp``).
    var operation: Unmanaged<Op>?
    /// The queue whose drainer the thread runs.
    var queue: Unmanaged<OpQueue>?
    /// The operation whose completion block the thread runs.
    var completingOperation: Unmanaged<Op>?
    /// The operation that finished and whose dependents the thread is telling (and whose
    /// observers run here): until the thread is done, it holds its queue slot and stays in its
    /// queue.
    var notifyingOperation: Unmanaged<Op>?
    /// The queue whose drainer will ask for the next operation right after the current
    /// notification, so that no drainer needs requesting for it.
    var pollingQueue: Unmanaged<OpQueue>?
    /// The observer deliveries in progress on this thread that hold an operation up, innermost
    /// last: the thread delivers before it moves the operation on (starts its body, finishes or
    /// completes it), or runs a `willExecute` or `willFinish` handler, which the operation waits
    /// for; or a queue's observers learn that the operation left (see ``Delivery``).
    var deliveries: [Delivery] = []
    /// The observer registries whose handlers run on this thread, innermost last: they step aside
    /// when the thread blocks in one of the library's waits (see
    /// ``ObserverRegistry/stepAsideForBlockingWait()``).
    var handlers: [Unmanaged<ObserverRegistry>] = []
    /// The pool worker that this thread is, if it is one.
    var worker: Unmanaged<Worker>?
    /// Operations waiting to be released by the ``ReleaseTrampoline``.
    var pendingReleases: [Op] = []
    /// Whether the trampoline is releasing on this thread.
    var isReleasing = false
    /// The thread's number in traces, from 1 (0: not numbered yet; see ``Instruments``).
    var traceThread = 0
    /// Whether the thread runs a job of ``OpTaskExecutor`` (a step of a task's `async` code).
    var isRunningTaskJob = false
    /// The hand-off of the next task job to this thread (see ``OpTaskExecutor``).
    var taskHandOff = TaskHandOff.closed

    /// Whether a task job enqueued on ``OpTaskExecutor`` from this thread runs here next, right
    /// after the current one, instead of going to the worker pool (which wakes another thread).
    enum TaskHandOff {
        /// Task jobs go to the worker pool.
        case closed
        /// The thread may keep the task of the next `async` operation it starts. Other task jobs
        /// (those of user code that runs meanwhile: an observer that starts a task and waits for
        /// it, say) still go to the pool.
        case open
        /// The library's `execute()` of an ``AsyncOp`` creates its task: its first job is kept.
        case claiming
        /// A task job is kept to run here once the current one returns.
        case taken(UnownedJob)
    }

    /// An observer delivery that holds `operation` up: handlers run before it can move on to its
    /// next state (its start, its finish, its completion), or for `operation` leaving its queue,
    /// after which it completes.
    struct Delivery {
        /// The operation whose change is delivered (for a queue's observers, the operation that
        /// just left it).
        let operation: Unmanaged<Op>
        /// Whether the operation has left its queue already (a queue's observers learn of it).
        let hasLeftQueue: Bool
    }

    /// The calling thread, as an address unique among the live threads (its context's).
    @inline(__always)
    static var identity: UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(current)
    }

    /// The calling thread's context.
    @inline(__always)
    static var current: UnsafeMutablePointer<ThreadContext> {
        if let raw = stored {
            return raw.assumingMemoryBound(to: ThreadContext.self)
        }
        return makeCurrent()
    }

    /// The context stored for the calling thread. On Linux, a C thread-local (see
    /// `operations_thread_context`): a load where the library is linked into the program, where
    /// `pthread_getspecific` is a call behind the key's lazy initialization. Elsewhere (Darwin,
    /// whose thread-local storage is freed by a key destructor of its own, in an order not
    /// checked here) the key itself.
    @inline(__always)
    private static var stored: UnsafeMutableRawPointer? {
        #if os(Linux)
        operations_thread_context()
        #else
        pthread_getspecific(key)
        #endif
    }

    @inline(never)
    private static func makeCurrent() -> UnsafeMutablePointer<ThreadContext> {
        let context = UnsafeMutablePointer<ThreadContext>.allocate(capacity: 1)
        context.initialize(to: ThreadContext())
        #if os(Linux)
        operations_set_thread_context(context)
        #endif
        // On Linux, registered with the key only so that its destructor frees it at thread exit.
        pthread_setspecific(key, context)
        return context
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let code = pthread_key_create(&key) { raw in
            #if canImport(Darwin)
            let context = raw.assumingMemoryBound(to: ThreadContext.self)
            #else
            guard let context = raw?.assumingMemoryBound(to: ThreadContext.self) else { return }
            #endif
            #if os(Linux)
            // Cleared first: code that runs later in the thread's exit (another key's destructor
            // releasing an operation) makes itself a new context instead of reaching this one.
            // (glibc and musl keep `__thread` storage until after every key destructor.)
            if operations_thread_context() == UnsafeMutableRawPointer(context) {
                operations_set_thread_context(nil)
            }
            #endif
            context.deinitialize(count: 1)
            context.deallocate()
        }
        precondition(code == 0, "Operations: pthread_key_create failed (\(code)); the process is out of thread-specific keys")
        return key
    }()

    // MARK: Scopes

    // The scopes below are written out one by one, without a generic helper: they are on the
    // path of every operation, and a generic helper over key paths costs value-witness calls and
    // reference counting there. Each caller keeps the objects it passes alive for the scope (they
    // are `self`, or held by a closure that runs the scope).

    /// Runs `body` with `operation` as the thread's ``operation``.
    @inline(__always)
    static func withOperation<Result>(_ operation: Op, _ body: () throws -> Result) rethrows -> Result {
        let context = current
        let previous = context.pointee.operation
        context.pointee.operation = Unmanaged.passUnretained(operation)
        defer { context.pointee.operation = previous }
        return try body()
    }

    /// Runs `body` with `queue` as the thread's ``queue``.
    @inline(__always)
    static func withQueue<Result>(_ queue: OpQueue?, _ body: () throws -> Result) rethrows -> Result {
        let context = current
        let previous = context.pointee.queue
        if let queue {
            context.pointee.queue = Unmanaged.passUnretained(queue)
        } else {
            context.pointee.queue = nil
        }
        defer { context.pointee.queue = previous }
        return try body()
    }

    /// Runs `body` with `operation` as the thread's ``completingOperation``.
    static func withCompletingOperation<Result>(_ operation: Op, _ body: () throws -> Result) rethrows -> Result {
        let context = current
        let previous = context.pointee.completingOperation
        context.pointee.completingOperation = Unmanaged.passUnretained(operation)
        defer { context.pointee.completingOperation = previous }
        return try body()
    }

    /// Runs `body` while the thread tells the dependents of `operation` that it finished, with
    /// `pollingQueue` as the queue whose drainer polls right after it (if any).
    @inline(__always)
    static func withNotifying<Result>(_ operation: Op, pollingQueue: OpQueue?, _ body: () throws -> Result) rethrows -> Result {
        let context = current
        let previous = (context.pointee.notifyingOperation, context.pointee.pollingQueue)
        context.pointee.notifyingOperation = Unmanaged.passUnretained(operation)
        if let pollingQueue {
            context.pointee.pollingQueue = Unmanaged.passUnretained(pollingQueue)
        } else {
            context.pointee.pollingQueue = nil
        }
        defer { (context.pointee.notifyingOperation, context.pointee.pollingQueue) = previous }
        return try body()
    }

    /// Runs `body`, which calls observers while `operation` cannot move on (or, with
    /// `hasLeftQueue`, the observers of its queue before it completes), as a ``Delivery``.
    static func withDelivery<Result>(of operation: Op, hasLeftQueue: Bool = false, _ body: () throws -> Result) rethrows -> Result {
        let context = current
        context.pointee.deliveries.append(Delivery(operation: Unmanaged.passUnretained(operation), hasLeftQueue: hasLeftQueue))
        defer { context.pointee.deliveries.removeLast() }
        return try body()
    }

    // MARK: Reading

    /// The operation whose body the calling thread runs, if any.
    static var operation: Op? {
        current.pointee.operation?.takeUnretainedValue()
    }

    /// The queue whose drainer the calling thread runs, if any.
    static var queue: OpQueue? {
        current.pointee.queue?.takeUnretainedValue()
    }

    /// The operation whose completion block the calling thread runs, if any.
    static var completingOperation: Op? {
        current.pointee.completingOperation?.takeUnretainedValue()
    }

    /// Whether `queue` is the one whose drainer polls right after the current notification.
    @inline(__always)
    static func isPolling(_ queue: OpQueue) -> Bool {
        current.pointee.pollingQueue?.toOpaque() == Unmanaged.passUnretained(queue).toOpaque()
    }
}
