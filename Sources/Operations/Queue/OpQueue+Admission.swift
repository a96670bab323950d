// Admission control and closing: a bound on the operations waiting in a queue that the adders
// which ask for room respect (`tryAddOperation`, `enqueue`), and a queue that takes no more.

extension OpQueue {
    /// The most pending operations (added and not yet started) that ``tryAddOperation(_:)`` and
    /// ``enqueue(_:)`` leave in the queue; `Int.max` (the default) for no bound.
    ///
    /// Use it to push back on producers that outrun the queue: a request handler that hands work
    /// to a queue awaits ``enqueue(_:)``, which suspends while the queue is full, instead of
    /// piling up work without limit.
    ///
    /// ```swift
    /// let jobs = OpQueue()
    /// jobs.maxConcurrentOperationCount = 8
    /// jobs.maxPendingOperationCount = 100
    /// try await jobs.enqueue(ThumbnailOp(upload))   // waits while 100 wait
    /// ```
    ///
    /// The Foundation-style adds (``addOperation(_:)-(Op)``, ``addOperations(_:waitUntilFinished:)-9bjwz``,
    /// ``addBarrierBlock(_:)``) are never refused or held back by it, so that code written for
    /// Foundation behaves as it did; their operations count as pending, leaving less room.
    /// Lowering it below the number pending now removes nothing.
    ///
    /// - Important: A negative bound is a programmer error and traps.
    public var maxPendingOperationCount: Int {
        get { withLock { admission.maxPending } }
        set {
            if newValue < 0 {
                misuse("maxPendingOperationCount of \(self) was set to \(newValue). Use 0 or more (Int.max, the default, for no bound).")
            }
            let told = withLock {
                admission.setMaxPending(newValue, pending: machine.pendingCount)
                return admission.takeTold()
            }
            OpQueue.tell(told)
        }
    }

    /// The number of operations in the queue that have not started yet: waiting for dependencies,
    /// conditions, exclusivity or limits, or for a free slot. It changes as they start; use it
    /// for display and metrics, not to decide whether to add (``tryAddOperation(_:)`` decides
    /// and adds at once).
    ///
    /// An operation that the queue took to start and that then waits for an exclusivity category
    /// held elsewhere counts as pending again from the queue's next step, a moment after its own
    /// state says it waits; until then it holds its slot instead. So the bound of
    /// ``maxPendingOperationCount`` can be passed by such operations, at most one per slot of
    /// ``maxConcurrentOperationCount``, when an add falls in that moment.
    public var pendingOperationCount: Int {
        withLock { machine.pendingCount }
    }

    /// Whether the queue is closed: it takes no new operations (see ``close()``).
    public var isClosed: Bool {
        withLock { admission.isClosed }
    }

    /// Adds `operation` if the queue has room for it: it is open, fewer than
    /// ``maxPendingOperationCount`` operations are pending, and no ``enqueue(_:)`` waits for room
    /// (they come first). Returns `false` otherwise, leaving `operation` untouched: it can be
    /// added elsewhere, or later.
    ///
    /// ```swift
    /// guard queue.tryAddOperation(resize) else {
    ///     return .serviceUnavailable   // shed load instead of queueing without limit
    /// }
    /// ```
    ///
    /// - Important: Adding an operation that is in a queue already, executing or finished is a
    ///   programmer error and traps, as with ``addOperation(_:)-(Op)``.
    public func tryAddOperation(_ operation: Op) -> Bool {
        guard withLock({ admission.reserve(pending: machine.pendingCount) }) else { return false }
        return admit(CollectionOfOne(operation), reserved: true)
    }

    /// Adds `operation` once the queue has room for it, suspending (holding no thread) while
    /// ``maxPendingOperationCount`` operations are pending. Callers that wait are served first
    /// come, first served, and before any ``tryAddOperation(_:)`` made while they wait.
    ///
    /// ```swift
    /// for try await upload in uploads {
    ///     try await queue.enqueue(ThumbnailOp(upload))   // backpressure on the producer
    /// }
    /// ```
    ///
    /// - Throws: ``OpQueueClosedError`` if the queue is closed, or closes while the caller
    ///   waits; `CancellationError` if the calling task is cancelled while it waits. In both
    ///   cases `operation` is untouched: it can be added elsewhere.
    ///
    /// - Important: Adding an operation that is in a queue already, executing or finished is a
    ///   programmer error and traps, as with ``addOperation(_:)-(Op)``.
    public func enqueue(_ operation: Op) async throws {
        enum Entry {
            case reserved
            case waiting(UInt64)
        }
        let box = LockedBox<UInt64?>(nil)   // the waiter's id, for the cancellation handler
        try await withTaskCancellationHandler {
            try Task.checkCancellation()
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let entry: Entry? = withLock {
                    if admission.isClosed { return nil }
                    if admission.reserve(pending: machine.pendingCount) { return .reserved }
                    let id = admission.wait { error in
                        if let error { continuation.resume(throwing: error) } else { continuation.resume() }
                    }
                    box.withLockedValue { $0 = id }
                    return .waiting(id)
                }
                switch entry {
                case nil:
                    continuation.resume(throwing: closedError)
                case .reserved:
                    continuation.resume()
                case .waiting(let id):
                    // Cancelled before the id was stored: the handler found nothing to withdraw.
                    if Task.isCancelled { withdrawAdder(id) }
                }
            }
        } onCancel: {
            if let id = box.withLockedValue({ $0 }) { withdrawAdder(id) }
        }
        // Closed between the reservation and now: the operation stays untouched.
        guard admit(CollectionOfOne(operation), reserved: true) else { throw closedError }
    }

    /// Closes the queue: it takes no new operations; those in it go on and finish as usual.
    ///
    /// From then on ``tryAddOperation(_:)`` returns `false`, ``enqueue(_:)`` throws
    /// ``OpQueueClosedError`` (also to callers waiting for room now), and the Foundation-style adds
    /// turn their operations away: each is cancelled with ``OpQueueClosedError`` as its
    /// ``Op/error`` and finishes at once without running, on the calling thread (its completion
    /// block and observers run), so that code waiting for it is not left hanging. Closing twice
    /// does nothing more. To close, wait, and cancel what is left after a grace period, use
    /// ``shutdown(gracePeriod:clock:)``.
    public func close() {
        let error = closedError
        let told = withLock {
            admission.close(error)
            isClosedFlag.store(true, ordering: .relaxed)
            return admission.takeTold()
        }
        OpQueue.tell(told)
    }

    /// The pending operations, and those that hold a slot of the queue's width (executing, or
    /// about to start), as they will be once `finishing` (a member that is finishing now, if
    /// given) has given its slot back and left (for metrics).
    final func gaugeCounts(finishing: Op? = nil) -> (pending: Int, running: Int) {
        withLock {
            var counts = (pending: machine.pendingCount, running: machine.runningCount)
            if let finishing, finishing.membership.slot >= 0, finishing.withState({ $0.queue }) === self {
                if finishing.membership.isTaken { counts.running -= 1 } else { counts.pending -= 1 }
            }
            return (max(0, counts.pending), max(0, counts.running))
        }
    }

    /// How many ``enqueue(_:)`` callers wait for room (for tests).
    final var admissionWaiterCount: Int {
        withLock { admission.waiterCount }
    }

    /// The entries of the line of callers waiting for room, withdrawn ones included (for tests).
    final var admissionLineLength: Int {
        withLock { admission.lineLength }
    }

    /// The error of this queue once closed.
    var closedError: OpQueueClosedError {
        OpQueueClosedError(queue: description)
    }

    /// The adder `id` stops waiting: its task was cancelled.
    private func withdrawAdder(_ id: UInt64) {
        let (withdrawn, told) = withLock { (admission.withdraw(id, pending: machine.pendingCount), admission.takeTold()) }
        OpQueue.tell(told)
        withdrawn?.resume(CancellationError())
    }

    /// Reserves room for the adders waiting, if there is some now, and hands them over to be told
    /// outside the lock. Call with the lock held, after the pending members decreased.
    final func admitWaiters() -> OpQueueStateMachine.Admission.Told {
        admission.pendingDecreased(to: machine.pendingCount)
        return admission.takeTold()
    }

    /// Tells adders that waited for room, outside the lock.
    static func tell(_ told: OpQueueStateMachine.Admission.Told) {
        for (waiter, error) in told {
            waiter.resume(error)
        }
    }
}
