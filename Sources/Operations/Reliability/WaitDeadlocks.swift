import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Detects blocking waits that could never return, and traps with an explanation instead of
/// freezing the program; or lets a wait return at once when what it waits for is already
/// observably done.
///
/// A wait can never return when what it waits for needs something that the waiting thread holds
/// up: the thread reads what it holds up from its ``ThreadContext`` (see ``Holds``).
///
/// Detected cases:
/// 1. ``Op/waitUntilFinished()`` called from inside the operation itself.
/// 2. ``Op/waitUntilFinished()`` called from an operation of a width-1 queue on another operation
///    that is waiting in the same queue (it cannot start while the caller holds the only slot).
/// 3. ``Op/waitUntilFinished()`` called from an operation on an operation that (transitively, by
///    dependencies or barriers) waits for the caller.
/// 4. ``OpQueue/waitUntilAllOperationsAreFinished()`` called from an operation of that queue, or
///    from the completion block of one (the queue cannot empty while the caller is in it), or
///    while one of its members waits for the caller.
/// 5. A wait on the main thread, or on the main Dispatch queue, for an operation of
///    ``OpQueue/main`` (or for the main queue to empty): the main queue cannot run it while the
///    thread serving it waits.
/// 6. A wait from an observer callback that holds its operation up: a `willExecute` or
///    `willFinish` callback (the operation waits for it), or a callback that the thread delivers
///    before it moves the operation on (the changes of a start or a finish it performs; see
///    ``ObserverRegistry/deliverHolding(_:from:)``): the operation cannot move on to its next
///    state until the callback returns. Waiting for that operation returns at once if it reads as
///    finished, and traps otherwise; waiting for an operation that waits for it, for an operation
///    behind it in a width-1 queue, or for its queue, traps. An operation that finished and whose
///    dependents' observers run on the thread holds its slot and its place in its queue the same
///    way. Any other callback holds nothing up while it waits: it steps aside (see
///    ``ObserverRegistry/stepAsideForBlockingWait()``), so that the events it would otherwise
///    hold back, its operation's `willExecute` and `willFinish` among them, are delivered
///    without it.
///
/// `addOperations(_:waitUntilFinished: true)` waits for each operation, so these cover it.
/// An operation's own completion block waiting for the operation returns at once: it is finished.
/// Waits between operations of different queues that each hold what the other needs are not
/// detected: use dependencies instead of waits.
///
/// Every trap's message ends with the lines of ``OpQueue/dump()`` that show what it is about: the
/// operations waited for and held (for a wait for an operation), or the queue (for a wait for a
/// queue to empty), each with what holds it. They are taken as the message is made, with no lock
/// held.
enum WaitDeadlocks {
    /// What the calling thread holds up while it runs the program's code.
    struct Holds {
        /// The operation whose body runs here (it cannot finish until the body returns).
        var body: Op?
        /// The queue whose drainer runs `body` (for the synchronous waits), or `body`'s queue.
        var bodyQueue: OpQueue?
        /// The operation whose completion block runs here (it stays in its queue until then).
        var completing: Op?
        /// Operations held between two states here, and how.
        var betweenStates: [(operation: Op, kind: Kind)] = []

        /// How an operation is held between two states.
        enum Kind {
            /// Observer callbacks that it waits for run here (its `willExecute` or `willFinish`,
            /// or the changes of a start or finish that this thread then performs): it cannot
            /// move on until they return.
            case changing
            /// It finished, and the observers of its dependents run here: it keeps its slot and its
            /// place in its queue until they return (its dependents were told already).
            case notifying
            /// The observers of its queue learn that it left: it completes once they return.
            case leftQueue
        }

        /// What the calling thread holds up.
        static var current: Holds {
            let context = ThreadContext.current.pointee
            var holds = Holds(body: context.operation?.takeUnretainedValue(),
                              bodyQueue: context.queue?.takeUnretainedValue(),
                              completing: context.completingOperation?.takeUnretainedValue())
            holds.betweenStates = context.deliveries.map { ($0.operation.takeUnretainedValue(), $0.hasLeftQueue ? .leftQueue : .changing) }
            if let notifying = context.notifyingOperation?.takeUnretainedValue() {
                holds.betweenStates.append((notifying, .notifying))
            }
            return holds
        }

        /// What the `async` body of `operation` holds up.
        static func task(running operation: Op?) -> Holds {
            Holds(body: operation, bodyQueue: operation?.withState { $0.queue })
        }

        /// The operations that cannot finish until the thread returns: what waits for them (by
        /// dependencies or barriers) cannot move on either.
        var unfinishable: [Op] {
            var held = body.map { [$0] } ?? []
            for entry in betweenStates where entry.kind == .changing {
                held.append(entry.operation)
            }
            return held
        }

        /// The operations that keep a slot of their queue and their place in it until the thread
        /// returns.
        var inTheirQueues: [Op] {
            var held = body.map { [$0] } ?? []
            for entry in betweenStates where entry.kind != .leftQueue {
                held.append(entry.operation)
            }
            return held
        }

        /// How the message names the caller that holds `operation` up.
        func caller(holding operation: Op) -> String {
            if operation === body { return "\(operation)" }
            switch betweenStates.first(where: { $0.operation === operation })?.kind {
            case .notifying:
                return "an observer handler of a dependent of \(operation) (\(operation) finished, and keeps its queue slot until the handler returns)"
            case .changing, .leftQueue, nil:
                return "an observer handler of \(operation) (it cannot move on to its next state until the handler returns)"
            }
        }
    }

    // MARK: Waiting for an operation

    /// Checks a blocking wait for `target` from the calling thread: traps if it could never
    /// return; returns `true` if it should return at once (what it waits for is held up by this
    /// very thread but already reads as finished).
    ///
    /// A wait that goes on makes the observer handlers running on the thread step aside (see
    /// ``ObserverRegistry/stepAsideForBlockingWait()``): they hold nothing up while it blocks.
    static func checkWait(for target: Op) -> Bool {
        let holds = Holds.current
        if isOnMainQueueOrThread, target.withState({ $0.queue === OpQueue.main && !$0.isFinished }) {
            misuse("waitUntilFinished() was called on \(target), an operation of OpQueue.main, from the main thread (or the main Dispatch queue), which is what runs it: it can never start while the main thread waits. Wait from another thread, or use a completion block or a dependent operation.\(QueueDump.appendix(for: [target]))")
        }
        if check(waitFor: target, holds: holds) { return true }
        ObserverRegistry.stepAsideForBlockingWait()
        return false
    }

    /// The checks of a wait for `target` (sync or `async`) against what the caller holds up.
    static func check(waitFor target: Op, holds: Holds) -> Bool {
        if let body = holds.body, body === target {
            // Finished inside its own body (an ``AsyncOp`` that called `finish()` in `execute()`,
            // a group with nothing to run), and waited for from there or from a handler of that
            // finish: its work is over, and the wait returns at once, as from any handler of its
            // finish (rule 7 of the delivery rules).
            if target.isFinished { return true }
            misuse("waitUntilFinished() was called on \(target) from inside its own body; it can never finish while it waits for itself. Remove the wait, or move the code that needs the result into a dependent operation or the completion block.\(QueueDump.appendix(for: [target]))")
        }
        if let entry = holds.betweenStates.first(where: { $0.operation === target }) {
            if target.isFinished { return true }
            misuse("waitUntilFinished() was called on \(target) from \(holds.caller(holding: entry.operation)): it can never finish while the handler waits. Wait from another thread, or act in the completion block or a dependent operation instead.\(QueueDump.appendix(for: [target]))")
        }
        for holder in holds.inTheirQueues {
            let (holderQueue, holdsSlot) = holder.withState { ($0.queue, $0.lifecycle == .executing || $0.lifecycle == .finishing) }
            guard holdsSlot, let queue = holderQueue ?? (holder === holds.body ? holds.bodyQueue : nil) else { continue }
            let (targetQueue, isPending) = target.withState { ($0.queue, $0.lifecycle == .pending) }
            if isPending, targetQueue === queue, queue.maxConcurrentOperationCount == 1 {
                misuse("waitUntilFinished() was called on \(target) from \(holds.caller(holding: holder)), which runs in \(queue) of width 1, where \(target) waits for the only slot: neither can ever proceed. Make \(target) a dependency of a new operation instead of waiting, or run it in another queue.\(QueueDump.appendix(for: [holder, target]))")
            }
        }
        let held = holds.unfinishable
        guard !held.isEmpty else { return false }
        let graph = WaitGraph(heldUp: held)
        if let path = graph.path(from: target, toAnyOf: Set(held.map(ObjectIdentifier.init))) {
            let holder = path.last!
            if holder === holds.body {
                misuse("waitUntilFinished() was called on \(target) from \(holder), but \(target) depends on \(holder) and cannot start until it finishes: neither can ever proceed. Remove the wait or the dependency.\(QueueDump.appendix(for: path))")
            }
            misuse("waitUntilFinished() was called on \(target) from \(holds.caller(holding: holder)), but \(target) waits for \(holder)\(describe(path)): the wait could never return. Wait from another thread, or act in the completion block or a dependent operation instead.\(QueueDump.appendix(for: path))")
        }
        return false
    }

    // MARK: Waiting for a queue

    /// Traps if waiting for `queue` to empty from the calling thread can never return; otherwise
    /// the observer handlers running on the thread step aside for the wait (see
    /// ``checkWait(for:)``).
    static func checkWaitForAll(in queue: OpQueue) {
        let holds = Holds.current
        if queue === OpQueue.main, isOnMainQueueOrThread, queue.operationCount > 0 {
            misuse("waitUntilAllOperationsAreFinished() was called on OpQueue.main from the main thread (or the main Dispatch queue), which is what runs its operations: they can never run while it waits. Wait from another thread, or add a barrier block for the work that must follow.\(QueueDump.appendix(of: queue))")
        }
        check(waitForAllIn: queue, holds: holds)
        ObserverRegistry.stepAsideForBlockingWait()
    }

    /// The checks of a wait for `queue` to empty (sync or `async`) against what the caller
    /// holds up.
    static func check(waitForAllIn queue: OpQueue, holds: Holds) {
        if let body = holds.body, holds.bodyQueue === queue {
            trapWaitForAll(in: queue, from: body)
        }
        if let completing = holds.completing, completing.withState({ $0.queue }) === queue {
            misuse("waitUntilAllOperationsAreFinished() was called on \(queue) from the completion block of \(completing), which stays in the queue until its completion block returns: the queue cannot empty while the block waits. Wait from outside the queue, or add a barrier block (addBarrierBlock(_:)) for the work that must follow.\(QueueDump.appendix(of: queue))")
        }
        for entry in holds.betweenStates where entry.kind != .leftQueue {
            if entry.operation.withState({ $0.queue === queue && $0.lifecycle != .finished }) {
                misuse("waitUntilAllOperationsAreFinished() was called on \(queue) from \(holds.caller(holding: entry.operation)), which is in that queue and cannot leave it while the handler waits: the queue cannot empty. Wait from another thread, or add a barrier block (addBarrierBlock(_:)) for the work that must follow.\(QueueDump.appendix(of: queue))")
            }
        }
        let held = holds.unfinishable
        guard !held.isEmpty else { return }
        let graph = WaitGraph(heldUp: held)
        let targets = Set(held.map(ObjectIdentifier.init))
        for member in queue.operations where !targets.contains(ObjectIdentifier(member)) {
            if let path = graph.path(from: member, toAnyOf: targets) {
                let holder = path.last!
                misuse("waitUntilAllOperationsAreFinished() was called on \(queue) from \(holds.caller(holding: holder)), but \(member), one of its operations, waits for \(holder)\(describe(path)): the queue cannot empty while the caller waits. Wait from outside, or add a barrier block (addBarrierBlock(_:)) for the work that must follow.\(QueueDump.appendix(for: path))")
            }
        }
    }

    /// Case 4: `current`, one of `queue`'s operations, waits for `queue` to empty.
    static func trapWaitForAll(in queue: OpQueue, from current: Op) -> Never {
        misuse("waitUntilAllOperationsAreFinished() was called on \(queue) from \(current), which is one of its operations: the queue cannot empty while that operation waits. Wait from outside the queue, or add a barrier block (addBarrierBlock(_:)) for the work that must follow.\(QueueDump.appendix(of: queue))")
    }

    /// " (through A → B)" for a path longer than one step, else "".
    private static func describe(_ path: [Op]) -> String {
        guard path.count > 2 else { return "" }
        return " (through \(path.dropFirst().dropLast().map(\.description).joined(separator: " → ")))"
    }

    // MARK: Main thread

    private static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// Whether the calling thread is the main thread or is running a block of the main queue.
    static var isOnMainQueueOrThread: Bool {
        DispatchQueue.getSpecific(key: mainQueueKey) == true || isMainThread
    }

    /// Whether the calling thread is the process's main thread.
    static var isMainThread: Bool {
        #if canImport(Darwin)
        return pthread_main_np() != 0
        #elseif os(Linux)
        // The main thread's thread id equals the process id; /proc/thread-self is
        // "<pid>/task/<tid>".
        var buffer = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        guard length > 0 else { return false }
        let parts = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: "/")
        return parts.count == 3 && parts[0] == parts[2]
        #else
        return false
        #endif
    }
}
