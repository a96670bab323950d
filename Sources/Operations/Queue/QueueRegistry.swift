/// Every live queue, so that a report about the worker pool can name the operations that hold
/// its threads.
///
/// A queue registers when it is created and leaves in its `deinit`. The registry holds no
/// reference: a queue whose `deinit` has begun waits for the registry's lock to leave it, so
/// while the lock is held, every registered queue is intact.
enum QueueRegistry {
    private static let queues = LockedBox<[ObjectIdentifier: Unmanaged<OpQueue>]>([:])

    static func register(_ queue: OpQueue) {
        queues.withLockedValue { $0[ObjectIdentifier(queue)] = Unmanaged.passUnretained(queue) }
    }

    static func unregister(_ queue: OpQueue) {
        _ = queues.withLockedValue { $0.removeValue(forKey: ObjectIdentifier(queue)) }
    }

    /// The synchronous operations executing in queues that run on the worker pool: each holds a
    /// worker thread while its body runs.
    static func operationsOnWorkerPool() -> [Op] {
        queues.withLockedValue { queues in
            queues.values.flatMap { queue in
                queue._withUnsafeGuaranteedRef { $0.operationsHoldingWorkers() }
            }
        }
    }
}
