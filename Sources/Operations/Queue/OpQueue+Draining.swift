import Dispatch

// Drainers: jobs on the worker pool (or the underlying Dispatch queue) that pop ready operations
// and run them one after another until none can start.

extension OpQueue {
    /// Starts a drainer on the underlying Dispatch queue or the worker pool.
    final func startDrainer() {
        if let (underlying, qos) = withLock({ storedUnderlyingQueue.map { ($0, storedQualityOfService) } }) {
            underlying.async(qos: DispatchQoS(qosClass: qos, relativePriority: 0)) { self.drain() }
        } else {
            WorkerPool.shared.submit { self.drain() }
        }
    }

    /// How long a drainer keeps going while other jobs wait for a worker, before it yields.
    private static let drainerTimeSlice: UInt64 = 2_000_000

    /// Pops and runs ready operations until none can start.
    private final func drain() {
        ThreadContext.withQueue(self) {
            drainLoop()
        }
    }

    /// The body of ``drain()``, with ``current`` set to this queue.
    private final func drainLoop() {
        withLock { machine.drainerStarted() }
        let started = DispatchTime.now().uptimeNanoseconds
        var releasing = false
        var leaving: Op?
        while true {
            // One lock acquisition per operation: the one that just finished leaves, its slot is
            // given back, and the next one is taken.
            let (next, left, stallCheck, discarded) = withLock {
                let left = leaving.map { leaveLocked($0, callerWillPoll: true) }
                let next = machine.next(releasingSlot: releasing)
                let discarded = machine.takeDiscarded()   // released below, outside the lock
                if case .stop = next { return (next, left, machine.stallCheckIfNeeded(), discarded) }
                return (next, left, nil, discarded)
            }
            withExtendedLifetime(discarded) {}
            if let left, let leaving {
                performLeaving(left, completing: leaving)
            }
            leaving = nil
            if let stallCheck { scheduleStallCheck(generation: stallCheck) }
            guard case .run(let entry, let requestDrainer) = next else { return }
            if requestDrainer { startDrainer() }
            switch entry.operation.runFromQueue(ticket: entry.ticket) {
            case .finished(let completesInDrainer):
                releasing = true
                leaving = completesInDrainer ? entry.operation : nil
            case .skipped:
                releasing = true
            case .continuesAsynchronously:
                releasing = false
            }
            if WorkerPool.shared.pendingJobs.load(ordering: .relaxed) > 0,
               DispatchTime.now().uptimeNanoseconds - started > OpQueue.drainerTimeSlice {
                // Let other queues' jobs have this worker; the slot goes back and another drainer
                // is requested if work remains.
                if let leaving {
                    performLeaving(withLock { leaveLocked(leaving, callerWillPoll: false) }, completing: leaving)
                }
                if releasing { releaseSlot(of: entry.operation) }
                return
            }
        }
    }
}
