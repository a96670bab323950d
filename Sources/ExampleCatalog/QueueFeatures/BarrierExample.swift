import Operations

/// `addBarrierBlock(_:)` on a concurrent queue: the barrier runs once every operation added
/// before it has finished, and the operations added after it start only once it has returned.
///
/// The `NSOperationQueue` reference describes `addBarrierBlock:` as the counterpart of a
/// Dispatch barrier: the block waits for the operations enqueued before it, and keeps the ones
/// enqueued after it from starting until it completes. Here four writes run side by side, the
/// barrier closes the file, and three reads run side by side after it; the shared state records
/// what each step saw, and the summary proves the order.
enum BarrierExample {
    /// What the writes, the barrier and the reads saw.
    final class Journal: Sendable {
        private struct State {
            var writesFinished = 0
            var barrierRan = false
            var writesSeenByBarrier = 0
            var readsStartedBeforeBarrier = 0
            var readsStarted = 0
            var readsAfterBarrier = 0
        }

        private let state = Locked(State())

        /// A write finished.
        func wrote() {
            state.withLock { $0.writesFinished += 1 }
        }

        /// The barrier runs: it notes how many writes had finished and how many reads had started.
        func barrier() {
            state.withLock { state in
                state.writesSeenByBarrier = state.writesFinished
                state.readsStartedBeforeBarrier = state.readsStarted
                state.barrierRan = true
            }
        }

        /// A read starts: it notes whether the barrier had run.
        func read() {
            state.withLock { state in
                state.readsStarted += 1
                if state.barrierRan { state.readsAfterBarrier += 1 }
            }
        }

        /// The summary of what the barrier and the reads saw.
        var summary: (writesSeenByBarrier: Int, readsStartedBeforeBarrier: Int, readsAfterBarrier: Int) {
            state.withLock { ($0.writesSeenByBarrier, $0.readsStartedBeforeBarrier, $0.readsAfterBarrier) }
        }
    }

    static let example = Example(
        name: "barrier",
        title: "A barrier between two phases",
        source: "NSOperationQueue reference: addBarrierBlock",
        expected: [
            "operationCount while suspended: 8 (4 writes, the barrier, 3 reads)",
            "the barrier ran after 4 of 4 writes had finished",
            "reads started before the barrier: 0",
            "reads started after the barrier: 3 of 3",
            "operationCount after the wait: 0",
        ]
    ) { output in
        let queue = OpQueue()
        queue.name = "file"   // the default width: the writes run side by side, so do the reads
        let journal = Journal()

        // Suspended while everything is added: the reads are ready from the start, so only the
        // barrier keeps them from starting alongside the writes once the queue is resumed. (A
        // barrier holds on a running queue the same way, and on an empty one too.)
        queue.isSuspended = true
        for _ in 1...4 {
            queue.addOperation { journal.wrote() }
        }
        queue.addBarrierBlock { journal.barrier() }
        for _ in 1...3 {
            queue.addOperation { journal.read() }
        }
        // The barrier is an operation of the queue like the others.
        output.line("operationCount while suspended: \(queue.operationCount) (4 writes, the barrier, 3 reads)")
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()   // waits for the barrier too

        let summary = journal.summary
        output.line("the barrier ran after \(summary.writesSeenByBarrier) of 4 writes had finished")
        output.line("reads started before the barrier: \(summary.readsStartedBeforeBarrier)")
        output.line("reads started after the barrier: \(summary.readsAfterBarrier) of 3")
        output.line("operationCount after the wait: \(queue.operationCount)")
    }
}
