import Operations

/// A queue with `maxConcurrentOperationCount = 1` running one operation at a time, in the order
/// they were added when they have the same priority and are ready together; and why the guide
/// still recommends dependencies when the order matters.
///
/// The guide's section *Adding Operations to an Operation Queue* explains that a queue of width
/// 1 runs one operation at a time, but that readiness and priority still decide which one goes
/// next, so it is not the same as a serial Dispatch queue. If the order matters, set it with
/// dependencies before adding the operations.
enum SerialQueueExample {
    /// An operation that records its start in `order`, then does a little work, counted by
    /// `gauge` as running from its start to its end, so that an overlap with another step would
    /// show. The work's result is kept in `results`, so that the work is not optimized away.
    static func step(
        _ name: String, gauge: ConcurrencyGauge, order: Recorder<String>, results: Recorder<UInt64>,
        output: ExampleOutput? = nil
    ) -> BlockOp {
        let operation = BlockOp {
            let checksum = gauge.measure {
                order.append(name)
                output?.line("\(name): running alone")
                var checksum: UInt64 = 0
                for value in 0..<20_000 as Range<UInt64> {
                    checksum = checksum &* 31 &+ value
                }
                return checksum
            }
            results.append(checksum)
        }
        operation.name = name
        return operation
    }

    /// The example: `swift run examples serial-queue`.
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
        // One gauge and one list of results for the whole example; an order for each part.
        let gauge = ConcurrencyGauge()
        let results = Recorder<UInt64>()

        // Same priority, all ready at once: they start in the order they were added, one at a
        // time, each after the previous one returned (so each may print without a lock).
        let order = Recorder<String>()
        let steps = (1...5).map { step("step \($0)", gauge: gauge, order: order, results: results, output: output) }
        serial.addOperations(steps, waitUntilFinished: true)
        output.line("order: \(order.all.joined(separator: ", "))")
        output.line("most operations running at once: \(gauge.peak)")

        // Not a FIFO, though: a higher priority goes first among the ready operations (the queue
        // is suspended while they are added, so that all three are waiting together).
        /// Save, compress and upload, at a very low, the normal and a very high priority, noting
        /// their starts in `order`.
        func pipeline(order: Recorder<String>) -> [BlockOp] {
            let save = step("save", gauge: gauge, order: order, results: results)
            save.queuePriority = .veryLow
            let compress = step("compress", gauge: gauge, order: order, results: results)
            let upload = step("upload", gauge: gauge, order: order, results: results)
            upload.queuePriority = .veryHigh
            return [save, compress, upload]
        }
        let byPriority = Recorder<String>()
        serial.isSuspended = true
        serial.addOperations(pipeline(order: byPriority), waitUntilFinished: false)
        serial.isSuspended = false
        serial.waitUntilAllOperationsAreFinished()
        output.line("with priorities: \(byPriority.all.joined(separator: ", "))")

        // Dependencies fix the order whatever the priorities say.
        let byDependencies = Recorder<String>()
        let ordered = pipeline(order: byDependencies)
        for (earlier, later) in zip(ordered, ordered.dropFirst()) {
            later.addDependency(earlier)
        }
        serial.isSuspended = true
        serial.addOperations(ordered, waitUntilFinished: false)
        serial.isSuspended = false
        serial.waitUntilAllOperationsAreFinished()
        output.line("with dependencies: \(byDependencies.all.joined(separator: ", "))")
        output.line("most operations running at once, over everything: \(gauge.peak)")
    }
}
