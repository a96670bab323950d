import Dispatch
import Operations

/// `queuePriority` choosing which ready operation a queue starts first, the rule that priority
/// never overrides dependencies, and `qualityOfService` on an operation and on a queue.
///
/// The guide's section *Changing an Operation's Execution Priority* says that a queue orders its
/// operations first by readiness, then by priority, and only among its own operations: a
/// high-priority operation that is not ready yet lets a ready low-priority one go first, and
/// only a dependency keeps one operation from starting before another. The `NSOperation`
/// reference adds `qualityOfService`, the importance of the work for the system's resources.
///
/// A suspended queue of width 1 makes the order visible and fixed: everything is added while
/// nothing can start, and once the queue is resumed it starts one operation at a time.
enum PrioritiesExample {
    /// Work for the `async` operation of the last part: reports whether its task runs with the
    /// priority that matches a `.userInitiated` quality of service.
    static func runsAtUserInitiatedPriority() async -> Bool {
        await Task.yield()
        return Task.currentPriority == .userInitiated
    }

    static let example = Example(
        name: "priorities-and-qos",
        title: "Priorities and quality of service",
        source: "Guide: Changing an Operation's Execution Priority; NSOperation reference",
        expected: [
            "added: prefetch (veryLow), thumbnail (low), metadata (normal), tap feedback (high), visible image (veryHigh)",
            "ran visible image (veryHigh)",
            "ran tap feedback (high)",
            "ran metadata (normal)",
            "ran thumbnail (low)",
            "ran prefetch (veryLow)",
            "publish (veryHigh) is ready: false; it depends on render (veryLow)",
            "ran cleanup (low)",
            "ran render (veryLow)",
            "ran publish (veryHigh)",
            "an operation's qualityOfService by default: default",
            "after setting it: utility",
            "a queue's qualityOfService by default: default",
            "after setting it: userInitiated",
            "an async operation added to that queue: qualityOfService userInitiated",
            "its body's task runs at TaskPriority.userInitiated: true",
        ],
        runAsync: { output in
            let queue = OpQueue()
            queue.name = "one at a time"
            queue.maxConcurrentOperationCount = 1

            // 1. Among ready operations, the highest priority starts first, whatever the order in
            //    which they were added.
            queue.isSuspended = true
            let work: [(label: String, priority: Op.QueuePriority)] = [
                ("prefetch", .veryLow), ("thumbnail", .low), ("metadata", .normal),
                ("tap feedback", .high), ("visible image", .veryHigh),
            ]
            for (label, priority) in work {
                let operation = BlockOp { output.line("ran \(label) (\(priority))") }
                operation.name = label
                operation.queuePriority = priority
                queue.addOperation(operation)
            }
            output.line("added: " + work.map { "\($0.label) (\($0.priority))" }.joined(separator: ", "))
            queue.isSuspended = false
            await queue.waitUntilAllOperationsAreFinished()

            // 2. Priority never overrides dependencies: the very-high-priority publish step waits for
            //    its very-low-priority dependency, and even a low-priority operation that is ready
            //    starts before it.
            queue.isSuspended = true
            let render = BlockOp { output.line("ran render (veryLow)") }
            render.name = "render"
            render.queuePriority = .veryLow
            let publish = BlockOp { output.line("ran publish (veryHigh)") }
            publish.name = "publish"
            publish.queuePriority = .veryHigh
            publish.addDependency(render)
            let cleanup = BlockOp { output.line("ran cleanup (low)") }
            cleanup.name = "cleanup"
            cleanup.queuePriority = .low
            await queue.addOperations([publish, render, cleanup], waitUntilFinished: false)
            output.line("publish (veryHigh) is ready: \(publish.isReady); it depends on render (veryLow)")
            queue.isSuspended = false
            await queue.waitUntilAllOperationsAreFinished()

            // 3. Quality of service. It does not order the operations of a queue (priorities and
            //    dependencies do): it tells the system how important the work is. When the library's
            //    worker pool has fewer free workers than work to do, it hands a worker to the queues
            //    of the higher classes first, so a `.userInitiated` queue does not wait behind a
            //    backlog of `.background` work; on Apple platforms the work also runs on threads of
            //    that class (on Linux every worker runs at one priority). A queue's class is what the
            //    pool looks at for the synchronous operations it runs; an operation's own class sets
            //    the priority of the `Task` that runs an `async` body. The values read like
            //    Foundation's, as Dispatch's QoS classes.
            let report = BlockOp {}
            output.line("an operation's qualityOfService by default: \(report.qualityOfService)")
            report.qualityOfService = .utility
            output.line("after setting it: \(report.qualityOfService)")

            let interactive = OpQueue()
            interactive.name = "interactive"
            output.line("a queue's qualityOfService by default: \(interactive.qualityOfService)")
            interactive.qualityOfService = .userInitiated
            output.line("after setting it: \(interactive.qualityOfService)")

            // An `async` closure becomes an operation with the queue's class, and its task gets the
            // matching priority.
            let check = interactive.addOperation { await runsAtUserInitiatedPriority() }
            output.line("an async operation added to that queue: qualityOfService \(check.qualityOfService)")
            output.line("its body's task runs at TaskPriority.userInitiated: \(try await check.value)")
        }
    )
}
