import Dispatch
import Operations

/// Listings 2-5 to 2-7, *Defining a concurrent operation*, *The start method* and *Updating an
/// operation at completion time*: an operation whose work completes later, in a callback, written
/// as an ``AsyncOp`` subclass.
///
/// The guide's `MyOperation` overrides `start`, `isConcurrent`, `isExecuting` and `isFinished`,
/// keeps `executing` and `finished` instance variables, and brackets every change of them with
/// `willChangeValueForKey:` / `didChangeValueForKey:`, since those notifications are how its
/// queue, its dependents and its observers learn that it finished. `Lookup` below overrides only
/// ``AsyncOp/execute()-3w8hx``, which starts the work, and calls ``AsyncOp/finish()`` once from
/// the callback; the comment in `Lookup` sets the listings' code beside what replaces it.
///
/// The example starts operations by hand (concurrent operations exist for that: a queue gives
/// every operation a thread anyway) and looks at them while their replies are held back, by a
/// suspended Dispatch queue that stands for the network. After `start()` returns, the operation
/// is still executing; once the callback calls `finish()` it is finished, and observers of
/// `isExecuting` and `isFinished` heard both changes without a line of notification code. It also
/// shows cancellation, while executing and before the start, and, for `async` code, the other
/// form of `AsyncOp`: an `async` `execute()` that needs no `finish()` at all.
enum ConcurrentOperationExample {
    /// The guide's `MyOperation`: finds the length of a word, answered in a callback on the
    /// `network` Dispatch queue after a short delay.
    final class Lookup: AsyncOp, @unchecked Sendable {
        // @unchecked Sendable (restated from AsyncOp, as a subclass must): `word` and `network`
        // are constants of Sendable types. `length` and `didExecute` are written before finish()
        // is called (by execute() or the callback it starts) and read only once the operation
        // has finished: finish() publishes them to the threads its waits release.
        //
        // What the Objective-C listings do by hand, and what takes its place here:
        //
        //   Listing 2-5: `BOOL executing, finished`    None: the library keeps the state, under its
        //   ivars, `isExecuting` / `isFinished`        own lock; isExecuting and isFinished are its
        //   overrides returning them                   own properties, safe from any thread.
        //
        //   Listing 2-5: `- (BOOL)isConcurrent`        None: isAsynchronous (and its old name
        //   returning YES                              isConcurrent) is true for every AsyncOp.
        //
        //   Listing 2-6: `start` checks isCancelled,   None: start() belongs to the library. A
        //   and if so sets `finished = YES` between   cancelled operation goes straight to
        //   will/didChangeValueForKey:@"isFinished"    finished without calling execute().
        //
        //   Listing 2-6: `start` detaches a thread     execute(): start the work (here a Dispatch
        //   for `main`, sets `executing = YES`         callback) and return. The library has made
        //   between will/didChange(@"isExecuting")     the operation executing before calling it.
        //
        //   Listing 2-7: `main` does the work, then    The callback does the work, then calls
        //   calls `completeOperation`                  finish().
        //
        //   Listing 2-7: `completeOperation` sets      finish(): isExecuting turns false and
        //   `executing = NO, finished = YES` inside    isFinished true in one step, observers are
        //   will/didChange for both keys, in the       told in that order, dependents become ready,
        //   right nesting                              the queue's slot is freed, waits return.
        //
        // A missed or misspelled key in the listings leaves the queue waiting forever; here the
        // only duty is to call finish() exactly once, cancelled or not.

        /// The word to look up.
        let word: String
        /// Where the simulated network delivers its reply.
        let network: DispatchQueue
        /// The length of the word, once the operation has finished, if it was not cancelled.
        private(set) var length: Int?
        /// Whether execute() was called, once the operation has finished.
        private(set) var didExecute = false

        init(word: String, network: DispatchQueue) {
            self.word = word
            self.network = network
            super.init()
        }

        override func execute() {
            didExecute = true
            // Cancelled between the start and this call: stop at once, but still finish.
            guard !isCancelled else {
                finish()
                return
            }
            network.asyncAfter(deadline: .now() + .milliseconds(5)) {
                // The reply. A cancelled lookup drops it, and finishes all the same.
                if !self.isCancelled {
                    self.length = self.word.count
                }
                self.finish()
            }
        }
    }

    /// The same lookup with an `async` body: the library runs it in a task and finishes the
    /// operation when it returns; cancelling the operation cancels the task.
    final class AsyncLookup: AsyncOp, @unchecked Sendable {
        // @unchecked Sendable (restated from AsyncOp): `word` is a constant; `length` is written by
        // the body before the library finishes the operation, and read only after that.

        /// The word to look up.
        let word: String
        /// The length of the word, once the operation has finished, if it was not cancelled.
        private(set) var length: Int?

        init(word: String) {
            self.word = word
            super.init()
        }

        override func execute() async throws {
            try await Task.sleep(for: .milliseconds(5))   // an awaited request; throws if cancelled
            length = word.count
        }
    }

    static let example = Example(
        name: "concurrent-operation",
        title: "An asynchronous operation",
        source: "Listings 2-5 to 2-7",
        expected: [
            "isAsynchronous: true",
            "observed isExecuting: false -> true",
            "after start(): isExecuting true, isFinished false",
            "cancelled while executing: isCancelled true, isExecuting true",
            "observed isExecuting: true -> false",
            "observed isFinished: false -> true",
            "after finish(): isExecuting false, isFinished true, length 10",
            "cancelled one after finish(): isFinished true, length nil",
            "cancelled before start(): execute() called false, isFinished true",
            "async body: isFinished true, length 5",
        ],
        runAsync: { output in
            // The simulated network replies on this queue. It is suspended at first, so that the
            // replies wait while the example looks at the operations in flight.
            let network = DispatchQueue(label: "concurrent-operation.network")
            network.suspend()

            let lookup = Lookup(word: "operations", network: network)
            output.line("isAsynchronous: \(lookup.isAsynchronous)")
            // The notifications the listings post by hand, observed here as Foundation's KVO would.
            let executing = lookup.observe(\.isExecuting, options: [.old, .new]) { _, change in
                output.line("observed isExecuting: \(change.oldValue!) -> \(change.newValue!)")
            }
            let finished = lookup.observe(\.isFinished, options: [.old, .new]) { _, change in
                output.line("observed isFinished: \(change.oldValue!) -> \(change.newValue!)")
            }

            // Started by hand: start() returns as soon as execute() has set the work going.
            lookup.start()
            output.line("after start(): isExecuting \(lookup.isExecuting), isFinished \(lookup.isFinished)")

            // Cancelling an executing operation only sets the flag; it stays executing until the
            // callback calls finish().
            let dropped = Lookup(word: "dropped", network: network)
            dropped.start()
            dropped.cancel()
            output.line("cancelled while executing: isCancelled \(dropped.isCancelled), isExecuting \(dropped.isExecuting)")

            // Let the replies through.
            network.resume()
            await lookup.waitUntilFinished()
            executing.invalidate()
            finished.invalidate()
            output.line("after finish(): isExecuting \(lookup.isExecuting), isFinished \(lookup.isFinished), length \(lookup.length.map(String.init) ?? "nil")")
            await dropped.waitUntilFinished()
            output.line("cancelled one after finish(): isFinished \(dropped.isFinished), length \(dropped.length.map(String.init) ?? "nil")")

            // Cancelled before it started: start() finishes it without calling execute(), the check
            // that Listing 2-6 writes by hand.
            let neverStarted = Lookup(word: "never", network: network)
            neverStarted.cancel()
            neverStarted.start()
            output.line("cancelled before start(): execute() called \(neverStarted.didExecute), isFinished \(neverStarted.isFinished)")

            // The async form, in a queue this time.
            let asyncLookup = AsyncLookup(word: "await")
            let queue = OpQueue()
            queue.addOperation(asyncLookup)
            await asyncLookup.waitUntilFinished()
            output.line("async body: isFinished \(asyncLookup.isFinished), length \(asyncLookup.length.map(String.init) ?? "nil")")
        }
    )
}
