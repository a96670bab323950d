import Dispatch
import Operations
import Workloads

/// Queues: many of them, one that is never empty, priorities changed while operations wait, and
/// the categories of mutual exclusivity that queues share.
extension Growth {
    /// How many operations stay inside the never-empty queue and the long-lived group.
    static let inside = 100

    /// One operation with `n` dependents, each in a queue of its own. Grows the number of
    /// queues that one finish reaches.
    static func dependentsAcrossQueues(_ n: Int) -> Sample {
        let clock = Stopwatch()
        do {
            let done = Countdown(n)
            let root = BlockOp {}
            var queues: [OpQueue] = []
            queues.reserveCapacity(n)
            for dependent in ticking(n, done) {
                dependent.addDependency(root)
                let queue = OpQueue()
                queue.addOperation(dependent)
                queues.append(queue)
            }
            let rootQueue = OpQueue()
            rootQueue.addOperation(root)
            done.wait()
        }
        return clock.sample
    }

    /// `n` operations pushed through one queue of width 1 that always holds about ``inside`` of
    /// them: each adds the next before it ends. Grows the number of operations the queue has
    /// ever held; also notes the heap the queue gained over the second half of the run (from
    /// operation n/2 to operation n, about ``inside`` in the queue both times), which must not
    /// grow with `n`. Width 1 leaves in the order they came, the shape in which what a queue
    /// keeps of its departed members piles up.
    static func neverEmptyQueue(_ n: Int) -> Sample {
        neverEmpty(n, width: 1)
    }

    /// The same through a queue of default width, where operations leave a little out of order.
    static func neverEmptyWideQueue(_ n: Int) -> Sample {
        neverEmpty(n, width: OpQueue.defaultMaxConcurrentOperationCount)
    }

    private static func neverEmpty(_ n: Int, width: Int) -> Sample {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = width
        let first = min(inside, n)
        let done = Countdown(n)
        let marks = HeapMarks()
        let ticket = Ticket(startingAt: first)
        @Sendable func next() -> Op {
            BlockOp {
                let number = ticket.take()
                if number < n {
                    if number == max(first, n / 2) { marks.markStart() }
                    if number == n - 1 { marks.markEnd() }
                    queue.addOperation(next())
                }
                done.tick()
            }
        }
        let clock = Stopwatch()
        queue.addOperations((0..<first).map { _ in next() }, waitUntilFinished: false)
        done.wait()
        var sample = clock.sample
        sample.keptBytes = marks.kept
        return sample
    }

    /// `n` operations waiting in a suspended queue each change priority four times (from the
    /// middle outwards), then the queue runs them. Grows the ready lists that a change moves an
    /// operation between.
    static func priorityChanges(_ n: Int) -> Sample {
        let done = Countdown(n)
        let queue = OpQueue()
        queue.isSuspended = true
        let operations = ticking(n, done)
        queue.addOperations(operations, waitUntilFinished: false)
        let order = fromTheMiddle(operations)
        let clock = Stopwatch()
        for priority in [Op.QueuePriority.high, .low, .veryHigh, .normal] {
            for operation in order { operation.queuePriority = priority }
        }
        queue.isSuspended = false
        done.wait()
        return clock.sample
    }

    /// `n` operations of one category of mutual exclusivity, spread over four queues, all
    /// waiting for the category at once. Grows the category's waiters.
    static func exclusivityAcrossQueues(_ n: Int) -> Sample {
        exclusive(n, queues: 4)
    }

    /// `n` operations of one category of mutual exclusivity in one queue, all waiting for the
    /// category at once (the figure).
    static func exclusivityInOneQueue(_ n: Int) -> Sample {
        exclusive(n, queues: 1)
    }

    /// An operation of the category holds it until every one of the `n` operations has been
    /// added, so that they all wait for it at once however fast the queues drain: the waiters,
    /// and the work of granting the category to each in turn, are the same in every run.
    private static func exclusive(_ n: Int, queues count: Int) -> Sample {
        let clock = Stopwatch()
        do {
            let done = Countdown(n)
            let category = OpCondition.mutuallyExclusive("complexity")
            let queues = (0..<count).map { _ in OpQueue() }
            let holder = CategoryHolder(category, on: queues[0])
            let operations = ticking(n, done)
            for operation in operations { operation.addCondition(category) }
            for (index, queue) in queues.enumerated() {
                queue.addOperations(Array(operations[index...].striding(by: count)), waitUntilFinished: false)
            }
            holder.letGo()
            done.wait()
        }
        return clock.sample
    }

    /// The same `n` operations without a category, on a queue of width 1: what exclusivity
    /// costs at best (the baseline).
    static func widthOne(_ n: Int) -> Sample {
        let clock = Stopwatch()
        do {
            let done = Countdown(n)
            let queue = OpQueue()
            queue.maxConcurrentOperationCount = 1
            queue.addOperations(ticking(n, done), waitUntilFinished: false)
            done.wait()
        }
        return clock.sample
    }
}

extension ArraySlice {
    /// Every `step`-th element, from the first.
    fileprivate func striding(by step: Int) -> [Element] {
        stride(from: startIndex, to: endIndex, by: step).map { self[$0] }
    }
}
