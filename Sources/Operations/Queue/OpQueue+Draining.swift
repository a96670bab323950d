import Dispatch

// Drainers: jobs on the worker pool (or the underlying Dispatch queue) that pop ready operations
// and run them one after another until none can start.

extension OpQueue {
    /// Starts a drainer on the underlying Dispatch queue or the worker pool. With `handedOver`,
    /// it continues a drainer that popped that entry but could not run it (see
    /// ``drainStartsHere()``), and runs it first.
    final func startDrainer(handingOver handedOver: ReadyLists.Entry? = nil) {
        let (underlying, qos) = withLock { (storedUnderlyingQueue, storedQualityOfService) }
        if let underlying {
            underlying.async(qos: DispatchQoS(qosClass: qos, relativePriority: 0)) {
                self.drain(sharing: true, handedOver: handedOver)
            }
        } else {
            WorkerPool.shared.submit(qualityOfService: qos) { self.drain(sharing: false, handedOver: handedOver) }
        }
    }

    /// How long a drainer on the worker pool keeps going while other jobs wait for a worker,
    /// before it yields.
    private static let drainerTimeSlice: UInt64 = 2_000_000

    /// How often a drainer on the worker pool tells the pool's monitor that it gets things done
    /// while jobs wait (the monitor looks about every millisecond).
    private static let progressNoteInterval: UInt64 = 250_000

    /// How long a drainer on a Dispatch queue keeps going before it hands the Dispatch queue back
    /// (another drainer is submitted behind the queue's other work).
    static let dispatchQueueTimeSlice: UInt64 = 1_000_000

    /// Pops and runs ready operations until none can start. A drainer `sharing` a Dispatch queue
    /// with other work hands it back after ``dispatchQueueTimeSlice``.
    final func drain(sharing: Bool, handedOver: ReadyLists.Entry? = nil) {
        ThreadContext.withQueue(self) {
            drainLoop(sharing: sharing, handedOver: handedOver)
        }
    }

    /// Runs a requested drainer on the calling thread, where an asynchronous operation finished in
    /// the task of its `async` body (a worker running a job of ``OpTaskExecutor``, or the executor
    /// of an actor where the body ended), where nothing may block:
    /// it starts the operations that start briefly (``Op/startsBriefly``: the library's own
    /// `execute()` of an ``AsyncOp`` starts its task and returns), and hands the first other one,
    /// with the rest of the draining, to the worker pool. An operation's own work (a `main()`, an
    /// overridden `execute()`) never starts here; its `willExecute` observers do. A queue of `async` operations thus
    /// moves on without a hop to the pool.
    ///
    /// On a thread that runs a job of ``OpTaskExecutor``, the task of the first `async` operation
    /// started here runs on this thread next, once the finishing task's job returns (a chain of
    /// `async` operations costs no wake-up per link); the others go to the worker pool.
    final func drainStartsHere() {
        let context = ThreadContext.current
        if context.pointee.isRunningTaskJob, case .closed = context.pointee.taskHandOff {
            context.pointee.taskHandOff = .open
        }
        ThreadContext.withQueue(self) {
            drainLoop(sharing: false, startsOnlyBriefOnes: true)
        }
        if case .open = context.pointee.taskHandOff {
            context.pointee.taskHandOff = .closed
        }
    }

    /// The body of ``drain(sharing:)``, with ``current`` set to this queue. With
    /// `startsOnlyBriefOnes`, the first operation that does not start briefly goes, with the rest
    /// of the draining, to a drainer on the worker pool; a `handedOver` entry (popped by such a
    /// drainer, its slot taken) runs first, and this continues that drainer.
    private final func drainLoop(sharing: Bool, startsOnlyBriefOnes: Bool = false, handedOver: ReadyLists.Entry? = nil) {
        var handedOver = handedOver
        if handedOver == nil {
            withLock { machine.drainerStarted() }
        }
        let started = DispatchTime.now().uptimeNanoseconds
        var noted = started
        var releasing = false
        var leaving: Op?
        var cameToNothing: Op?
        var givenBack: Op?
        var admitted: OpQueueStateMachine.Admission.Told = []
        while true {
            if let entry = handedOver {
                handedOver = nil
                run(entry, releasing: &releasing, leaving: &leaving, cameToNothing: &cameToNothing, givenBack: &givenBack)
                continue
            }
            // Moved out of the variables that `run` sets, into constants: the closure below reads
            // constants without retaining them, and each call with them needs no copy.
            let finished = leaving.take()
            let cameToNothingNow = cameToNothing.take()
            let givenBackNow = givenBack.take()
            // One lock acquisition per operation: the one that just finished leaves, its slot is
            // given back, and the next one is taken.
            var step: DrainStep = withLock {
                if let operation = cameToNothingNow {
                    // A lane's head that will not ask after all lets the next one go.
                    _ = machine.releaseLane(of: operation, callerWillPoll: true)
                }
                if let operation = givenBackNow {
                    machine.startGivenBack(operation)
                }
                let left = finished.map { leaveLocked($0, callerWillPoll: true) }
                if let left, left.changes.recorded {
                    // Observers learn of the leaving before this drainer takes another operation,
                    // so that nothing of the queue is held up by this thread while they run (a
                    // handler may wait for the queue): the slot goes back now, and another drainer
                    // is requested if more can start.
                    if admission.hasWaiters { admitted = admitWaiters() }
                    return DrainStep(next: nil, left: left, requestsDrainer: machine.releaseSlot(),
                                     stallCheck: nil, discarded: machine.takeDiscarded())
                }
                let next = machine.next(releasingSlot: releasing, laneCategory: OpQueue.laneCategory)
                let discarded = machine.takeDiscarded()   // released below, outside the lock
                // Adders that the leaving or the start made room for (rare: kept out of the step).
                if admission.hasWaiters { admitted = admitWaiters() }
                if case .stop = next {
                    return DrainStep(next: next, left: left, requestsDrainer: false,
                                     stallCheck: machine.stallCheckIfNeeded(), discarded: discarded)
                }
                return DrainStep(next: next, left: left, requestsDrainer: false, stallCheck: nil, discarded: discarded)
            }
            withExtendedLifetime(step.discarded) {}
            if !admitted.isEmpty {
                OpQueue.tell(admitted)
                admitted = []
            }
            if step.requestsDrainer { startDrainer() }
            // Moved out, not copied: a copy retains each of its references.
            if let left = step.left.take(), let finished = consume finished {
                performLeaving(left, completing: finished)
            }
            if let stallCheck = step.stallCheck { scheduleStallCheck(generation: stallCheck) }
            let entry: ReadyLists.Entry
            switch step.next.take() {   // moved out: the step's copy is not released separately
            case .none:
                releasing = false   // given back with the leaving
                continue
            case .stop?:
                return
            case .run(let next, let requestDrainer)?:
                if requestDrainer { startDrainer() }
                entry = next
            }
            if startsOnlyBriefOnes, !entry.operation.startsBriefly {
                // Not on a thread of the cooperative pool: the slot is taken, a worker runs it.
                startDrainer(handingOver: entry)
                return
            }
            run(entry, releasing: &releasing, leaving: &leaving, cameToNothing: &cameToNothing, givenBack: &givenBack)
            if sharing {
                // The Dispatch queue runs other work too: after a slice, hand it back.
                if DispatchTime.now().uptimeNanoseconds - started > OpQueue.dispatchQueueTimeSlice {
                    yield(leaving: leaving, releasingSlot: releasing, cameToNothing: cameToNothing, givenBack: givenBack)
                    return
                }
            } else if WorkerPool.shared.pendingJobs.load(ordering: .relaxed) > 0 {
                // Jobs wait: tell the pool's monitor, now and then, that this worker gets things
                // done, and after a slice let other queues' jobs have it: the operation that
                // finished leaves, the slot goes back (in one lock acquisition, before any
                // observer runs), and another drainer is requested if work remains.
                let now = DispatchTime.now().uptimeNanoseconds
                if now - noted > OpQueue.progressNoteInterval {
                    WorkerPool.noteProgress()
                    noted = now
                }
                if now - started > OpQueue.drainerTimeSlice {
                    yield(leaving: leaving, releasingSlot: releasing, cameToNothing: cameToNothing, givenBack: givenBack)
                    return
                }
            }
        }
    }

    /// Runs a popped entry's operation; says whether its slot is to be given back, whether it
    /// leaves the queue with the next lock acquisition, and whether its start was given back (it
    /// is pending again).
    @inline(__always)
    private final func run(_ entry: consuming ReadyLists.Entry, releasing: inout Bool, leaving: inout Op?, cameToNothing: inout Op?,
                           givenBack: inout Op?) {
        switch entry.operation.runFromQueue(ticket: entry.ticket, queue: self) {
        case .finished(let completesInDrainer):
            releasing = true
            leaving = completesInDrainer ? entry.operation : nil
        case .skipped:
            releasing = true
            cameToNothing = entry.operation
            givenBack = entry.operation
        case .waitsForCategories:
            releasing = true
            givenBack = entry.operation
        case .continuesAsynchronously:
            releasing = false
        }
    }

    /// A drainer stops: `leaving` (if any) leaves the queue, the slot goes back if
    /// `releasingSlot`, the lane of `cameToNothing` (an operation whose start came to nothing)
    /// lets its next operation go, `givenBack` is pending again, and another drainer is
    /// requested if more can start.
    private final func yield(leaving: Op?, releasingSlot: Bool, cameToNothing: Op?, givenBack: Op?) {
        var admitted: OpQueueStateMachine.Admission.Told = []
        let (left, requestsDrainer) = withLock {
            let unparks = cameToNothing.map { machine.releaseLane(of: $0, callerWillPoll: false) } ?? false
            if let givenBack { machine.startGivenBack(givenBack) }
            let left = leaving.map { leaveLocked($0, callerWillPoll: false) }
            if admission.hasWaiters { admitted = admitWaiters() }
            return (left, (releasingSlot ? machine.releaseSlot() : machine.requestDrainerIfNeeded()) || unparks)
        }
        if !admitted.isEmpty { OpQueue.tell(admitted) }
        if requestsDrainer { startDrainer() }
        if let left, let leaving {
            performLeaving(left, completing: leaving)
        }
    }

    /// What a drainer does after one acquisition of the queue's lock.
    private struct DrainStep {
        /// What to run next; `nil` to deliver `left` and ask again.
        var next: OpQueueStateMachine.NextAction?
        /// What the operation that finished last asks for, now that it has left.
        var left: Leaving?
        /// Whether another drainer was requested.
        var requestsDrainer: Bool
        var stallCheck: UInt64?
        var discarded: [ReadyLists.Entry]?
    }
}
