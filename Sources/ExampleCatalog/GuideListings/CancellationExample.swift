import Dispatch
import Operations

/// Listing 2-4, *Responding to a cancellation request*: a ``Op/main()`` that checks
/// ``Op/isCancelled`` before it starts its work and once in every pass of its loop, and returns
/// early when the operation was cancelled.
///
/// The Objective-C `main` loops `while (![self isCancelled] && !isDone)`; `Passes.main()` below
/// has the same loop. Cancellation is cooperative: ``Op/cancel()`` only sets the flag, and the
/// loop notices it at its next check. The example runs three operations: one that is left alone
/// and does all its passes; one cancelled while it runs, which stops at its next check (to make
/// that moment deterministic, it pauses after its second pass until the example has cancelled it);
/// and one cancelled before it started, whose `main()` never runs at all: the library finishes a
/// cancelled operation without calling its body. The check before the loop still matters, for a
/// cancellation that arrives just after the operation started.
enum CancellationExample {
    /// An operation that does up to `passCount` passes of work, checking for cancellation before
    /// each one.
    final class Passes: Op, @unchecked Sendable {
        // @unchecked Sendable (restated from Op, as a subclass must): `passCount` and `afterPass`
        // are constants of Sendable types. `completedPasses` and `ranMain` are written only by
        // main() and read only once the operation has finished, which the waits that release the
        // reading thread publish; they need no lock.

        /// How many passes make the whole job.
        let passCount: Int
        /// Called after each pass with the number of passes done so far.
        let afterPass: @Sendable (Int) -> Void
        /// How many passes were done, once the operation has finished.
        private(set) var completedPasses = 0
        /// Whether `main()` was called, once the operation has finished.
        private(set) var ranMain = false

        init(passCount: Int, afterPass: @escaping @Sendable (Int) -> Void) {
            self.passCount = passCount
            self.afterPass = afterPass
            super.init()
        }

        override func main() {
            ranMain = true
            var isDone = false
            // Checked before the first pass, and again before each of the others.
            while !isCancelled && !isDone {
                completedPasses += 1   // a pass of the work
                afterPass(completedPasses)
                isDone = completedPasses == passCount
            }
        }

        /// How the operation ended, once it has finished.
        var summary: String {
            if !ranMain { return "cancelled before it started, main() never ran" }
            if completedPasses < passCount { return "stopped early, after \(completedPasses) of \(passCount) passes" }
            return "did all \(passCount) passes"
        }
    }

    static let example = Example(
        name: "responding-to-cancellation",
        title: "Checking isCancelled in main()",
        source: "Listing 2-4",
        expected: [
            "first: pass 1",
            "first: pass 2",
            "first: pass 3",
            "first: did all 3 passes",
            "second: pass 1",
            "second: pass 2",
            "cancelling the second operation while it runs",
            "second: stopped early, after 2 of 10 passes",
            "third: cancelled before it started, main() never ran",
            "third: isCancelled true, isFinished true",
        ]
    ) { output in
        let queue = OpQueue()

        // Left alone: the loop ends because the work is done.
        let first = Passes(passCount: 3) { pass in output.line("first: pass \(pass)") }
        queue.addOperation(first)
        first.waitUntilFinished()
        output.line("first: \(first.summary)")

        // Cancelled while it runs: after its second pass it waits until the example has
        // cancelled it, then its loop sees the cancellation at the next check.
        let reachedSecondPass = DispatchSemaphore(value: 0)
        let cancelled = DispatchSemaphore(value: 0)
        let second = Passes(passCount: 10) { pass in
            output.line("second: pass \(pass)")
            if pass == 2 {
                reachedSecondPass.signal()
                cancelled.wait()
            }
        }
        queue.addOperation(second)
        reachedSecondPass.wait()
        output.line("cancelling the second operation while it runs")
        second.cancel()
        cancelled.signal()
        second.waitUntilFinished()
        output.line("second: \(second.summary)")

        // Cancelled before it started: it finishes without running main().
        let third = Passes(passCount: 10) { pass in output.line("third: pass \(pass)") }
        third.cancel()
        queue.addOperation(third)
        third.waitUntilFinished()
        output.line("third: \(third.summary)")
        output.line("third: isCancelled \(third.isCancelled), isFinished \(third.isFinished)")
    }
}
