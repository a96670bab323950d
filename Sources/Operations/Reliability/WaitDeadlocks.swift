import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Detects blocking waits that could never return, and traps with an explanation instead of
/// freezing the program.
///
/// Detected cases:
/// 1. ``Op/waitUntilFinished()`` called from inside the operation itself.
/// 2. ``Op/waitUntilFinished()`` called from an operation of a width-1 queue on another operation
///    that is waiting in the same queue (it cannot start while the caller holds the only slot).
/// 3. ``Op/waitUntilFinished()`` called from an operation on an operation that (transitively)
///    depends on the caller.
/// 4. ``OpQueue/waitUntilAllOperationsAreFinished()`` called from an operation of that queue, or
///    from the completion block of one (the queue cannot empty while the caller is in it).
/// 5. A wait on the main thread, or on the main Dispatch queue, for an operation of
///    ``OpQueue/main`` (or for the main queue to empty): the main queue cannot run it while the
///    thread serving it waits.
///
/// `addOperations(_:waitUntilFinished: true)` waits for each operation, so cases 2, 3 and 5 cover it.
/// An operation's own completion block waiting for the operation returns at once: it is finished.
/// Waits between operations of different queues that each hold what the other needs are not
/// detected: use dependencies instead of waits.
enum WaitDeadlocks {
    /// Traps if waiting for `target` from the calling thread can never return.
    static func checkWait(for target: Op) {
        if let current = ThreadContext.operation {
            checkWait(for: target, from: current, in: ThreadContext.queue)
        }
        if isOnMainQueueOrThread, target.withState({ $0.queue === OpQueue.main && !$0.isFinished }) {
            misuse("waitUntilFinished() was called on \(target), an operation of OpQueue.main, from the main thread (or the main Dispatch queue), which is what runs it: it can never start while the main thread waits. Wait from another thread, or use a completion block or a dependent operation.")
        }
    }

    /// Traps if `current`, an operation running in `queue` (if any), waiting for `target` could
    /// never return (cases 1 to 3).
    static func checkWait(for target: Op, from current: Op, in queue: OpQueue?) {
        do {
            if current === target {
                misuse("waitUntilFinished() was called on \(target) from inside its own body; it can never finish while it waits for itself. Remove the wait, or move the code that needs the result into a dependent operation or the completion block.")
            }
            if let queue {
                let (targetQueue, isPending) = target.withState { ($0.queue, $0.lifecycle == .pending) }
                if isPending, targetQueue === queue, queue.maxConcurrentOperationCount == 1 {
                    misuse("waitUntilFinished() was called on \(target) from \(current), which runs in \(queue) of width 1, where \(target) waits for the only slot: neither can ever proceed. Make \(target) a dependency of a new operation instead of waiting, or run it in another queue.")
                }
            }
            if DependencyCycles.blockingPath(from: target, to: current) != nil {
                misuse("waitUntilFinished() was called on \(target) from \(current), but \(target) depends on \(current) and cannot start until it finishes: neither can ever proceed. Remove the wait or the dependency.")
            }
        }
    }

    /// Traps if waiting for `queue` to empty from the calling thread can never return.
    static func checkWaitForAll(in queue: OpQueue) {
        if ThreadContext.queue === queue, let current = ThreadContext.operation {
            trapWaitForAll(in: queue, from: current)
        }
        if let completing = ThreadContext.completingOperation, completing.withState({ $0.queue }) === queue {
            misuse("waitUntilAllOperationsAreFinished() was called on \(queue) from the completion block of \(completing), which stays in the queue until its completion block returns: the queue cannot empty while the block waits. Wait from outside the queue, or add a barrier block (addBarrierBlock(_:)) for the work that must follow.")
        }
        if queue === OpQueue.main, isOnMainQueueOrThread, queue.operationCount > 0 {
            misuse("waitUntilAllOperationsAreFinished() was called on OpQueue.main from the main thread (or the main Dispatch queue), which is what runs its operations: they can never run while it waits. Wait from another thread, or add a barrier block for the work that must follow.")
        }
    }

    /// Case 4: `current`, one of `queue`'s operations, waits for `queue` to empty.
    static func trapWaitForAll(in queue: OpQueue, from current: Op) -> Never {
        misuse("waitUntilAllOperationsAreFinished() was called on \(queue) from \(current), which is one of its operations: the queue cannot empty while that operation waits. Wait from outside the queue, or add a barrier block (addBarrierBlock(_:)) for the work that must follow.")
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
        // The main thread's thread id equals the process id; /proc/thread-self names both.
        var buffer = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        guard length > 0 else { return false }
        let link = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let parts = link.split(separator: "/")
        return parts.count == 3 && parts[0] == parts[2]
        #else
        return false
        #endif
    }
}
