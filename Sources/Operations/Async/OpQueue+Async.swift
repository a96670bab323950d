extension OpQueue {
    /// Suspends until the queue is empty — every operation, barriers included, finished and its
    /// completion block returned — without blocking a thread.
    ///
    /// Cancelling the awaiting task does not end the wait and cancels nothing.
    ///
    /// - Important: Awaiting this from one of the queue's own operations could never return; it
    ///   traps with an explanation instead.
    public func waitUntilAllOperationsAreFinished() async {
        if let current = Op.currentTaskOperation {
            WaitDeadlocks.check(waitForAllIn: self, holds: .task(running: current))
        }
        let watch = CycleSearchingWait.watch { DependencyCycles.endCycles(blockingMembersOf: self) }
        await withCheckedContinuation { continuation in
            if !addEmptyWaiter({ continuation.resume() }) {
                continuation.resume()
            }
        }
        watch?.stop()
    }

    /// Adds several operations at once and, if `wait` is `true`, suspends until all of them have
    /// finished and their completion blocks have returned, without blocking a thread.
    public func addOperations(_ operations: [Op], waitUntilFinished wait: Bool) async {
        admit(operations)
        if wait {
            await Op.waitUntilAllFinished(operations)
        }
    }

    /// Wraps an `async` closure in an operation, adds it, and returns it so that its result can be
    /// awaited:
    ///
    /// ```swift
    /// let image = try await queue.addOperation { try await resize(data) }.value
    /// ```
    ///
    /// The closure runs in a `Task` with the priority that matches the queue's
    /// ``qualityOfService``, on the library's own threads (``OpTaskExecutor``), as work handed to
    /// a queue is expected to: CPU work in it does not take one of Swift's few cooperative
    /// threads. The operation holds its slot of the queue's width until the closure returns, and
    /// cancelling it (or ``cancelAllOperations()``) cancels the task.
    @discardableResult
    public func addOperation<Success: Sendable>(
        _ work: @escaping @Sendable () async throws -> Success
    ) -> AsyncBlockOp<Success> {
        let operation = AsyncBlockOp(work)
        operation.qualityOfService = qualityOfService
        addOperation(operation)
        return operation
    }

    /// Wraps an `async` closure that runs isolated to `actor` in an operation, adds it, and returns
    /// it. Use it to run an operation's body on an actor (for the main actor, mark the closure
    /// `@MainActor` and use ``addOperation(_:)->_``).
    ///
    /// ```swift
    /// let count = try await queue.addOperation(on: cache) { cache in cache.prune() }.value
    /// ```
    @discardableResult
    public func addOperation<Isolation: Actor, Success: Sendable>(
        on actor: Isolation,
        _ work: @escaping @Sendable (isolated Isolation) async throws -> Success
    ) -> AsyncBlockOp<Success> {
        addOperation { try await work(actor) }
    }
}
