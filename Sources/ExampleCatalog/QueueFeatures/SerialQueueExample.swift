import Operations
import Synchronization

/// A queue with `maxConcurrentOperationCount = 1` running one operation at a time, in the order
/// they were added when they have the same priority and are ready together; and why the guide
/// still recommends dependencies when the order matters.
///
/// The guide's section *Adding Operations to an Operation Queue* explains that a queue of width
/// 1 runs one operation at a time, but that readiness and priority still decide which one goes
/// next, so it is not the same as a serial Dispatch queue. If the order matters, set it with
/// dependencies before adding the operations.
enum SerialQueueExample {
    /// Keeps track of how many operations run at once, and of the order in which they ran.
    final class Tracker: Sendable {
        private struct State {
            var running = 0
            var mostAtOnce = 0
            var order: [String] = []
            var checksum: UInt64 = 0
        }

        private let state = Mutex(State())

        /// Marks the start of `step`.
        func begin(_ step: String) {
            state.withLock { state in
                state.running += 1
                state.mostAtOnce = max(state.mostAtOnce, state.running)
                state.order.append(step)
            }
        }

        /// Marks the end of a step that computed `result` (kept, so that the work is done).
        func end(result: UInt64) {
            state.withLock { state in
                state.running -= 1
                state.checksum ^= result
            }
        }

        /// The most steps that ever ran at once.
        var mostAtOnce: Int {
            state.withLock { $0.mostAtOnce }
        }

        /// The steps in the order they started, and forgets them.
        func takeOrder() -> String {
            state.withLock { state in
                defer { state.order = [] }
                return state.order.joined(separator: ", ")
            }
        }
    }

    /// An operation that records its start and end around a little work, so that an overlap with
    /// another step would show.
    static func step(_ name: String, tracker: Tracker, output: ExampleOutput? = nil) -> BlockOp {
        let operation = BlockOp {
            tracker.begin(name)
            output?.line("\(name): running alone")
            var checksum: UInt64 = 0
            for value in 0..<20_000 as Range<UInt64> {
                checksum = checksum &* 31 &+ value
            }
            tracker.end(result: checksum)
        }
        operation.name = name
        return operation
    }

    static let example = Example(
        name: "serial-queue",
        title: "A serial operation queue",
        source: "Guide: Adding Operations to an Operation Queue",
        expected: [
            "step 1: running alone",
            "step 2: running alone",
            "step 3: running alone",
            "step 4: running alone",
            "step 5: running alone",
            "order: step 1, step 2, step 3, step 4, step 5",
            "most operations running at once: 1",
            "with priorities: upload, compress, save",
            "with dependencies: save, compress, upload",
            "most operations running at once, over everything: 1",
        ]
    ) { output in
        let serial = OpQueue()
        serial.name = "serial"
        serial.maxConcurrentOperationCount = 1
        let tracker = Tracker()

        // Same priority, all ready at once: they start in the order they were added, one at a
        // time, each after the previous one returned (so each may print without a lock).
        let steps = (1...5).map { step("step \($0)", tracker: tracker, output: output) }
        serial.addOperations(steps, waitUntilFinished: true)
        output.line("order: \(tracker.takeOrder())")
        output.line("most operations running at once: \(tracker.mostAtOnce)")

        // Not a FIFO, though: a higher priority goes first among the ready operations (the queue
        // is suspended while they are added, so that all three are waiting together).
        func pipeline() -> [BlockOp] {
            let save = step("save", tracker: tracker)
            save.queuePriority = .veryLow
            let compress = step("compress", tracker: tracker)
            let upload = step("upload", tracker: tracker)
            upload.queuePriority = .veryHigh
            return [save, compress, upload]
        }
        serial.isSuspended = true
        serial.addOperations(pipeline(), waitUntilFinished: false)
        serial.isSuspended = false
        serial.waitUntilAllOperationsAreFinished()
        output.line("with priorities: \(tracker.takeOrder())")

        // Dependencies fix the order whatever the priorities say.
        let ordered = pipeline()
        for (earlier, later) in zip(ordered, ordered.dropFirst()) {
            later.addDependency(earlier)
        }
        serial.isSuspended = true
        serial.addOperations(ordered, waitUntilFinished: false)
        serial.isSuspended = false
        serial.waitUntilAllOperationsAreFinished()
        output.line("with dependencies: \(tracker.takeOrder())")
        output.line("most operations running at once, over everything: \(tracker.mostAtOnce)")
    }
}
