// Progress: every operation's `OpProgress`, created when it is first asked for.

extension Op {
    /// How far the operation has come.
    ///
    /// A long ``main()`` or an ``AsyncOp`` sets ``OpProgress/totalUnitCount`` and raises
    /// ``OpProgress/completedUnitCount`` as it goes; an operation that sets nothing counts as one
    /// unit, complete when it finishes. A ``GroupOp``'s progress rolls up its children. While
    /// the operation runs in a queue, the queue's ``OpQueue/progress`` counts it by its fraction.
    ///
    /// ```swift
    /// final class Import: Op, @unchecked Sendable {
    ///     override func main() {
    ///         progress.totalUnitCount = Int64(rows.count)
    ///         for row in rows where !isCancelled {
    ///             store(row)
    ///             progress.completedUnitCount += 1
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// The progress object is made the first time it is asked for; an operation whose progress
    /// nobody asks for pays nothing.
    public final var progress: OpProgress {
        let (progress, created, finished) = withState { machine -> (OpProgress, Bool, Bool) in
            if let existing = machine.existingProgress { return (existing, false, false) }
            let made = (self as? GroupOp).map(OpProgress.init(group:)) ?? OpProgress()
            machine.keepProgress(made)
            return (made, true, machine.isFinished)
        }
        guard created else { return progress }
        if let group = self as? GroupOp {
            // Rolled up from the children; only its queue needs to learn of it. A finished
            // group's counts are kept, as the progress may outlive the group.
            if finished {
                progress.groupDidFinish(childCount: group.childProgress.total)
            } else if group.isExecuting {
                group.reportProgressToQueue()
            }
        } else if finished {
            progress.ownerDidFinish()
        } else {
            addObserver(ProgressTracker(progress: progress))
        }
        return progress
    }

    /// The queue whose progress counts this operation's, if it runs in one (a group's children
    /// are counted by their group instead).
    final func reportProgress(_ progress: OpProgress) {
        guard let queue = withState({ $0.queue }), !queue.isGroupQueue else { return }
        queue.memberReportsProgress(self, progress)
    }
}

/// Completes an operation's ``Op/progress`` when the operation finishes, and has its queue count
/// the progress while it runs. An observer, so that an operation whose progress nobody asked for
/// pays nothing.
struct ProgressTracker: OpObserver {
    let progress: OpProgress

    func didAttach(to operation: Op) {
        if operation.isFinished {
            progress.ownerDidFinish()
        } else if operation.isExecuting {
            operation.reportProgress(progress)
        }
    }

    func willExecute(_ operation: Op) {
        operation.reportProgress(progress)
    }

    func willFinish(_ operation: Op, error: (any Error)?) {
        progress.ownerDidFinish()
    }

    /// Also here: a tracker added while the operation was finishing may miss `willFinish`.
    func didFinish(_ operation: Op, error: (any Error)?) {
        progress.ownerDidFinish()
    }
}
