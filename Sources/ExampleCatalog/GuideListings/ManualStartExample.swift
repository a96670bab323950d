import Dispatch
import Operations

/// Listing 2-8, *Executing an operation object manually*: run an operation without a queue, by
/// calling ``Op/start()`` once it is ready, and try again later while it is not.
///
/// The Objective-C `performOperation:` starts the operation if `isReady` and not `isCancelled`,
/// moves a cancelled one to the finished state, and returns whether it did either; its caller
/// schedules a timer to try again while it returns `NO`. `perform(_:)` below keeps that shape,
/// and `performWhenReady(_:on:attempt:output:then:)` is the timer: it tries again after a short
/// delay on a Dispatch queue until the operation has been run.
///
/// The checks matter: ``Op/start()`` on an operation that is not ready (a dependency has not
/// finished) traps, as Foundation raises an exception. Two things are simpler than in the
/// listing. A cancelled operation needs no hand-made state change (the listing sets `executing`
/// and `finished` with KVO notifications, on `self` rather than on the operation): calling
/// `start()` on it finishes it without running its body, and cancelling made it ready whatever
/// its dependencies. And the listing's `isConcurrent` branch, which detaches a thread, is not
/// needed to keep the caller free: an ``AsyncOp``'s `start()` returns at once, and this example
/// already calls `start()` from the timer's thread.
///
/// The operation first waits for a dependency in a queue that is held suspended until the first
/// attempt has failed, so that attempt fails every time; the queue then runs the dependency, and
/// a later attempt starts the operation.
enum ManualStartExample {
    /// A step of work that says when it runs and remembers that it did.
    final class Step: Op, @unchecked Sendable {
        // @unchecked Sendable (restated from Op, as a subclass must): `label` and `output` are
        // constants of Sendable types; `didRun` is written only by main() and read only once the
        // operation has finished, which the start() or wait that preceded the read publishes.

        let label: String
        let output: ExampleOutput
        /// Whether main() ran, once the operation has finished.
        private(set) var didRun = false

        init(_ label: String, output: ExampleOutput) {
            self.label = label
            self.output = output
            super.init()
        }

        override func main() {
            didRun = true
            output.line("\(label) runs")
        }
    }

    /// The listing's `performOperation:`: starts `operation` if it can, and says whether it did
    /// (or finished it because it was cancelled); `false` means "try again later".
    static func perform(_ operation: Op) -> Bool {
        if operation.isReady && !operation.isCancelled {
            // A synchronous operation runs main() on this thread and is finished when start()
            // returns; an asynchronous one (isAsynchronous, formerly isConcurrent) only sets its
            // work going here.
            operation.start()
            return true
        } else if operation.isCancelled {
            // Cancelled before it started: start() moves it to finished without running main(),
            // so it is never passed here again.
            operation.start()
            return true
        }
        return false
    }

    /// The listing's timer: calls ``perform(_:)`` now and, while it returns `false`, again a
    /// little later on `timerQueue`; calls `done` once the operation has been run.
    static func performWhenReady(
        _ operation: Step, on timerQueue: DispatchQueue, attempt: Int = 1,
        output: ExampleOutput, then done: @escaping @Sendable () -> Void
    ) {
        if perform(operation) {
            done()
            return
        }
        if attempt == 1 {
            output.line("\(operation.label) is not ready: trying again later")
        }
        timerQueue.asyncAfter(deadline: .now() + .milliseconds(2)) {
            performWhenReady(operation, on: timerQueue, attempt: attempt + 1, output: output, then: done)
        }
    }

    static let example = Example(
        name: "running-manually",
        title: "Starting an operation by hand",
        source: "Listing 2-8",
        expected: [
            "report: isReady false (prepare has not finished)",
            "report is not ready: trying again later",
            "prepare runs",
            "report runs",
            "report: isFinished true, main() ran true",
            "abandoned: isReady false",
            "abandoned, cancelled: isReady true",
            "abandoned: isFinished true, main() ran false",
        ]
    ) { output in
        // `report` waits for `prepare`, which a suspended queue holds back for now.
        let setup = OpQueue()
        setup.isSuspended = true
        let prepare = Step("prepare", output: output)
        let report = Step("report", output: output)
        report.addDependency(prepare)
        setup.addOperation(prepare)
        output.line("report: isReady \(report.isReady) (prepare has not finished)")

        let timerQueue = DispatchQueue(label: "running-manually.timer")
        let ran = DispatchSemaphore(value: 0)
        // The first attempt, made here: it cannot succeed while the queue is suspended.
        performWhenReady(report, on: timerQueue, output: output) { ran.signal() }
        // Now let `prepare` run; a later attempt finds `report` ready and starts it.
        setup.isSuspended = false
        ran.wait()
        output.line("report: isFinished \(report.isFinished), main() ran \(report.didRun)")

        // An operation whose dependency never runs is never ready, until it is cancelled:
        // performOperation's second branch then finishes it without running it.
        let never = Step("never", output: output)
        let abandoned = Step("abandoned", output: output)
        abandoned.addDependency(never)
        output.line("abandoned: isReady \(abandoned.isReady)")
        abandoned.cancel()
        output.line("abandoned, cancelled: isReady \(abandoned.isReady)")
        let finished = perform(abandoned)
        precondition(finished, "a cancelled operation is always finished by perform(_:)")
        output.line("abandoned: isFinished \(abandoned.isFinished), main() ran \(abandoned.didRun)")
    }
}
