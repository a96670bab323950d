import Dispatch
import Operations

/// Observing an operation's `isFinished` and a queue's `operationCount` with
/// `observe(_:options:changeHandler:)`, then invalidating the observations.
///
/// The `NSOperation` and `NSOperationQueue` references list the properties that are key-value
/// observable, and the guide's section *Maintaining KVO Compliance* explains that queues and
/// dependencies rely on those notifications. Linux has no KVO: `Op` and `OpQueue` provide the
/// same block-based API, with `ObservingOptions`, `ObservedChange` and an `ObservationToken`.
///
/// A handler runs on the thread that made the change, so the example keeps its output in a fixed
/// order: the operation handler prints only its one change, the queue handler collects the
/// counts, and the example prints them once the handler has seen the queue empty.
enum ObservingStateExample {
    /// The example: `swift run examples observing-state`.
    static let example = Example(
        name: "observing-state",
        title: "Observing operations and queues",
        source: "NSOperation and NSOperationQueue references: KVO-compliant properties",
        expected: [
            "thumbnail 2 isFinished: false (initial value)",
            "operationCount while the queue is suspended: 3",
            "thumbnail 2 isFinished: false → true",
            "operationCount went 1, 2, 3, 2, 1, 0",
            "tokens valid after invalidate(): false, false",
            "changes seen after invalidate(): none (still 6 values)",
        ]
    ) { output in
        let queue = OpQueue()
        queue.name = "thumbnails"
        let thumbnails = (1...3).map { number in
            let thumbnail = BlockOp {}
            thumbnail.name = "thumbnail \(number)"
            return thumbnail
        }

        // The handler gets the operation as its first argument: use it rather than capturing the
        // operation. `.initial` calls the handler once, right away, with the current value.
        let sawFinish = DispatchSemaphore(value: 0)
        let finishToken = thumbnails[1].observe(\.isFinished, options: [.initial, .old, .new]) { thumbnail, change in
            let name = thumbnail.name ?? "?"
            if let old = change.oldValue, let new = change.newValue {
                output.line("\(name) isFinished: \(old) → \(new)")
                sawFinish.signal()
            } else if let value = change.newValue {
                output.line("\(name) isFinished: \(value) (initial value)")
            }
        }

        // Every change reaches the handler once, in the order the changes happened, even when
        // operations finish on several threads at once.
        let counts = Recorder<Int>()   // the values of `operationCount` the handler saw, in order
        let sawEmpty = DispatchSemaphore(value: 0)
        let countToken = queue.observe(\.operationCount, options: [.new]) { _, change in
            guard let count = change.newValue else { return }
            counts.append(count)
            if count == 0 { sawEmpty.signal() }
        }

        // Suspended, the queue only grows: one change per operation added.
        queue.isSuspended = true
        for thumbnail in thumbnails {
            queue.addOperation(thumbnail)
        }
        output.line("operationCount while the queue is suspended: \(queue.operationCount)")
        queue.isSuspended = false

        // Wait for the handlers themselves: they run on worker threads, and a handler may still
        // be delivering a change when a wait for the queue returns.
        sawFinish.wait()
        sawEmpty.wait()
        output.line("operationCount went " + counts.all.map(String.init).joined(separator: ", "))

        // An observation lasts until its token is invalidated (or released).
        finishToken.invalidate()
        countToken.invalidate()
        output.line("tokens valid after invalidate(): \(finishToken.isValid), \(countToken.isValid)")

        queue.addOperation {}
        queue.waitUntilAllOperationsAreFinished()
        let seen = counts.all.count
        output.line("changes seen after invalidate(): \(seen == 6 ? "none" : "\(seen - 6)") (still \(seen) values)")
    }
}
