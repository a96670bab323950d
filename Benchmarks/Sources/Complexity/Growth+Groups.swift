import Operations

/// Groups: many of them, one that lives long, and retries.
extension Growth {
    /// One operation with `n` dependents, each a child of a group of its own (beside a child that
    /// tells the group started); the groups share a queue. Grows the number of groups that one
    /// finish reaches.
    static func dependentsAcrossGroups(_ n: Int) -> Sample {
        let clock = Stopwatch()
        do {
            let done = Countdown(n)
            let started = Countdown(n)
            let root = BlockOp {}
            var groups: [Op] = []
            groups.reserveCapacity(n)
            for dependent in ticking(n, done) {
                dependent.addDependency(root)
                // A second child, free to run as soon as its group starts: it tells that the
                // group put its children in its queue.
                groups.append(GroupOp(operations: [dependent, BlockOp { started.tick() }]))
            }
            // The groups hold their slots while their children wait: the root has a queue of
            // its own. It runs once every group has started, so that every child is in its
            // group's queue, waiting for it, when it finishes. Waited for with one wake-up, not
            // polled group by group: the pauses of a poll were most of this check's noise.
            let queue = OpQueue()
            queue.addOperations(groups, waitUntilFinished: false)
            started.wait()
            let rootQueue = OpQueue()
            rootQueue.addOperation(root)
            done.wait()
        }
        return clock.sample
    }

    /// One group that runs `n` children over its life, about ``inside`` at a time: each child
    /// adds the next to its group before it ends. Grows the number of children the group has
    /// ever had; also notes the heap it gained over the second half of the run (from child n/2
    /// to child n, about ``inside`` running both times), which must not grow with `n`.
    static func groupChildren(_ n: Int) -> Sample {
        // Every child's body, then the group's completion block: the group's own finish, which
        // walks what it kept of its children, is timed too.
        let done = Countdown(n + 1)
        let marks = HeapMarks()
        let first = min(inside, n)
        let ticket = Ticket(startingAt: first)
        @Sendable func next() -> Op {
            BlockOp {
                let number = ticket.take()
                if number < n {
                    if number == max(first, n / 2) { marks.markStart() }
                    if number == n - 1 { marks.markEnd() }
                    Op.current!.group!.addChild(next())
                }
                done.tick()
            }
        }
        let clock = Stopwatch()
        let group = GroupOp(operations: (0..<first).map { _ in next() })
        group.completionBlock = { done.tick() }
        let queue = OpQueue()
        queue.addOperation(group)
        done.wait()
        var sample = clock.sample
        sample.keptBytes = marks.kept
        return sample
    }

    /// One group that holds an exclusivity category, with `n` children of the same category:
    /// the children take it in turns under their group's hold. Grows the children waiting for
    /// the category inside its holder (issue 22: each release offered it to every one of them).
    static func exclusiveGroupChildren(_ n: Int) -> Sample {
        let clock = Stopwatch()
        do {
            let done = Countdown(n)
            let category = OpCondition.mutuallyExclusive("complexity-group")
            let children = ticking(n, done)
            for child in children { child.addCondition(category) }
            let group = GroupOp(operations: children)
            group.addCondition(category)
            let queue = OpQueue()
            queue.addOperation(group)
            done.wait()
        }
        return clock.sample
    }

    /// One ``RetryOp`` whose `n` attempts all fail at once. Grows its attempts; also notes the
    /// heap it gained between making attempt n/2 and attempt n, which must not grow with `n`.
    static func retryAttempts(_ n: Int) -> Sample {
        struct Failure: Error {}
        let done = Countdown(1)
        let marks = HeapMarks()
        let first = min(inside, n)
        let retry = RetryOp(maxAttempts: n) { attempt in
            if attempt == max(first, n / 2) { marks.markStart() }
            if attempt == n { marks.markEnd() }
            return ResultOp<Int> { throw Failure() }
        }
        retry.completionBlock = { done.tick() }
        let clock = Stopwatch()
        let queue = OpQueue()
        queue.addOperation(retry)
        done.wait()
        var sample = clock.sample
        sample.keptBytes = marks.kept
        return sample
    }
}
