import Dispatch
import Operations

/// `async(flags: .barrier)` on a concurrent `DispatchQueue` next to
/// ``OpQueue/addBarrierBlock(_:)``: readers run side by side, a writer runs alone, after the
/// readers submitted before it and before those submitted after it.
///
/// What the operation form adds: the barrier works on any ``OpQueue`` (a GCD barrier on a global
/// queue is silently an ordinary block), also on an empty or suspended one and one with a width
/// limit; it is an operation of the queue, so ``OpQueue/waitUntilAllOperationsAreFinished()-2ptgv``
/// waits for it and ``OpQueue/cancelAllOperations()`` cancels it if it has not run. What GCD
/// keeps: `sync(flags: .barrier)` runs the writer and returns its value in one call; with
/// operations you add the barrier and then wait.
enum BarrierComparison {
    static let example = Example(
        name: "gcd-barrier",
        title: "A barrier block: DispatchQueue vs OpQueue",
        source: "GCD: DispatchQueue.async(flags: .barrier)",
        expected: [
            "GCD barrier: read 0, read 0, read 0, write 1, read 1, read 1, read 1",
            "GCD barrier: no read ran during the write",
            "OpQueue barrier: read 0, read 0, read 0, write 1, read 1, read 1, read 1",
            "OpQueue barrier: no read ran during the write",
        ]
    ) { output in
        // GCD: the barrier needs a concurrent queue of our own. `sync(flags: .barrier) {}`
        // returns once everything before it has run.
        let concurrent = DispatchQueue(label: "gcd-barrier.store", attributes: .concurrent)
        let gcdStore = Store()
        for _ in 1...3 { concurrent.async { gcdStore.read() } }
        concurrent.async(flags: .barrier) { gcdStore.write(1) }
        for _ in 1...3 { concurrent.async { gcdStore.read() } }
        concurrent.sync(flags: .barrier) {}
        output.line("GCD barrier: \(gcdStore.history)")
        output.line(gcdStore.wroteAlone ? "GCD barrier: no read ran during the write" : "GCD barrier: a read overlapped the write")

        // Operations: the same on a default OpQueue.
        let queue = OpQueue()
        queue.name = "gcd-barrier.store"
        let opStore = Store()
        for _ in 1...3 { queue.addOperation { opStore.read() } }
        queue.addBarrierBlock { opStore.write(1) }
        for _ in 1...3 { queue.addOperation { opStore.read() } }
        queue.waitUntilAllOperationsAreFinished()
        output.line("OpQueue barrier: \(opStore.history)")
        output.line(opStore.wroteAlone ? "OpQueue barrier: no read ran during the write" : "OpQueue barrier: a read overlapped the write")
    }

    /// A value read and written from any thread, with the history of accesses and whether a
    /// write ever overlapped a read.
    final class Store: Sendable {
        private struct State {
            var value = 0
            var history: [String] = []
            var readers = 0
            var overlapped = false
        }

        private let state = Locked(State())

        /// Reads the value; the read is counted as running between two separate steps, so that a
        /// write in between would be seen.
        func read() {
            state.withLock { state in
                state.readers += 1
                state.history.append("read \(state.value)")
            }
            state.withLock { $0.readers -= 1 }
        }

        func write(_ value: Int) {
            state.withLock { state in
                if state.readers > 0 { state.overlapped = true }
                state.value = value
                state.history.append("write \(value)")
            }
        }

        var history: String { state.withLock { $0.history.joined(separator: ", ") } }
        var wroteAlone: Bool { state.withLock { !$0.overlapped } }
    }
}
