import Dispatch
import Foundation
import Operations
import Workloads
#if ASYNC_QUEUE_PEER
import AsyncQueuePeer
#endif

// Runs our OpQueue and its peers (Foundation's OperationQueue, Dispatch, a TaskGroup) on the same
// workloads in one process and prints the times and the ratio ours / Foundation.
//
//     swift run -c release compare              every workload
//     swift run -c release compare chain        the workloads whose name contains "chain"
//     REPEAT=5 swift run -c release compare     best of 5 runs (default 3)
//     swift run -c release compare profile W    our side of workload W only, ten times (profiling):
//                                               independent, width-1, chain, dag, async-width-1,
//                                               async-independent, async-width-1-one-wait,
//                                               async-independent-one-wait, async-sleeping,
//                                               limited, limited-one-queue
//     SWIFT_ASYNC_QUEUE_PATH=… swift run -c release compare async
//                                               row 15 against swift-async-queue's FIFOQueue too

let arguments = CommandLine.arguments

// This top-level code awaits, so it runs as a task on the main thread, and the synchronous
// workloads block that thread on purpose (each is measured as a synchronous caller runs it): the
// library's report of a synchronous wait inside a task would only repeat that. Other reports
// still go to standard error.
OpDiagnostics.handler = { diagnostic in
    if case .synchronousWaitInTask = diagnostic { return }
    OpDiagnostics.writeToStandardError(diagnostic)
}

if arguments.count == 3, arguments[1] == "profile" {
    for _ in 0..<10 {
        switch arguments[2] {
        case "independent": Workloads.oursIndependent(100_000)
        case "width-1": Workloads.oursSerial(100_000)
        case "chain": Workloads.oursChain(10_000)
        case "dag": Workloads.oursRandomDAG(100_000)
        case "async-width-1": Workloads.oursAsyncSerial(100_000)
        case "async-independent": Workloads.oursAsyncIndependent(100_000)
        case "async-width-1-one-wait": Workloads.oursAsyncSerialOneWait(100_000)
        case "async-independent-one-wait": Workloads.oursAsyncIndependentOneWait(100_000)
        case "async-sleeping": Workloads.oursAsyncSleeping(2_000, milliseconds: 1, width: 8)
        case "limited": Workloads.oursLimitedAcrossQueues(100_000)
        case "limited-one-queue": Workloads.oursLimitedAcrossQueues(100_000, queues: 1, width: 4)
        default: fatalError("unknown workload \(arguments[2])")
        }
    }
    exit(0)
}

// `compare memory ours|foundation N`: a child process that keeps N operations pending and prints
// the resident memory they take, in bytes per operation.
if arguments.count == 4, arguments[1] == "memory", let count = Int(arguments[3]) {
    let before = PeakMemory.residentBytes
    if arguments[2] == "ours" {
        let queue = Workloads.oursPending(count)
        print((PeakMemory.peakResidentBytes - before) / count)
        withExtendedLifetime(queue) {}
    } else {
        let queue = Workloads.foundationPending(count)
        print((PeakMemory.peakResidentBytes - before) / count)
        withExtendedLifetime(queue) {}
    }
    exit(0)
}

// `compare scale`: microseconds per operation from 1k to 10M operations, added by 1, 2, 4 and 8
// threads at once (a table of its own; 10M takes a while).
if arguments.count >= 2, arguments[1] == "scale" {
    let counts = [1_000, 10_000, 100_000, 1_000_000, 10_000_000]
    let submitters = [1, 2, 4, 8]
    print("| operations | " + submitters.map { "\($0) submitter\($0 == 1 ? "" : "s")" }.joined(separator: " | ") + " |")
    print("|---:|" + String(repeating: "---:|", count: submitters.count))
    for count in counts {
        let runs = count >= 1_000_000 ? 1 : 3
        let cells = submitters.map { threads in
            let seconds = Measure.best(of: runs) { Workloads.oursScale(count, submitters: threads) }
            return String(format: "%.2f µs/op", seconds / Double(count) * 1e6)
        }
        print("| \(count) | " + cells.joined(separator: " | ") + " |")
        fflush(nil)
    }
    exit(0)
}

let filter = arguments.dropFirst().first
let repetitions = Int(ProcessInfo.processInfo.environment["REPEAT"] ?? "") ?? 3
var report = Report()

func include(_ name: String) -> Bool {
    guard let filter else { return true }
    return name.contains(filter)
}

// Issue 26 (speed round 3): each row's ratio and its target, printed in a table of their own.
// The rows whose peer is not Foundation's queue read it from the same run: the DAG from our own
// independent operations, the latency from the kernel's wake-up floor.
var oursIndependent100k: Double?

if include("independent") {
    let count = 100_000
    let ours = Measure.best(of: repetitions) { Workloads.oursIndependent(count) }
    let foundation = Measure.best(of: repetitions) { Workloads.foundationIndependent(count) }
    let dispatch = Measure.best(of: repetitions) { Workloads.dispatchIndependent(count) }
    oursIndependent100k = ours
    report.add(Row(
        name: "1. independent 100k", unit: .perOperation(count),
        ours: ours, foundation: foundation,
        dispatch: dispatch,
        taskGroup: await Measure.best(of: repetitions) { await Workloads.taskGroupIndependent(count) }))
    report.addTarget(issue: "Issue 26", Target(
        name: "1. independent 100k", unit: .perOperation(count), ours: ours,
        peerName: "Foundation", peer: foundation, limit: 0.10, whenFiled: "0.18–0.20",
        scale: ("DispatchQueue.global()", dispatch)))
}

if include("width-1") {
    let count = 100_000
    let ours = Measure.best(of: repetitions) { Workloads.oursSerial(count) }
    let foundation = Measure.best(of: repetitions) { Workloads.foundationSerial(count) }
    let dispatch = Measure.best(of: repetitions) { Workloads.dispatchSerial(count) }
    report.add(Row(
        name: "2. width-1 100k", unit: .perOperation(count),
        ours: ours, foundation: foundation, dispatch: dispatch))
    report.addTarget(issue: "Issue 26", Target(
        name: "2. width-1 100k", unit: .perOperation(count), ours: ours,
        peerName: "Foundation", peer: foundation, limit: 0.07, whenFiled: "0.10–0.14",
        scale: ("a serial DispatchQueue", dispatch)))
}

if include("chain") {
    // Foundation's scheduler is quadratic here: one run of 10,000 takes seconds to tens of seconds.
    let ours = Measure.best(of: repetitions) { Workloads.oursChain(10_000) }
    let foundation = Measure.seconds { Workloads.foundationChain(10_000) }
    report.add(Row(name: "3. chain 10k", unit: .total, ours: ours, foundation: foundation))
    report.addTarget(issue: "Issue 26", Target(
        name: "3. chain 10k", unit: .total, ours: ours,
        peerName: "Foundation", peer: foundation, limit: 0.0007, whenFiled: "0.0015–0.0020"))
    report.add(Row(
        name: "3. chain 100k (ours only)", unit: .total,
        ours: Measure.best(of: repetitions) { Workloads.oursChain(100_000) }))
}

if include("fan-in") {
    let ours = Measure.best(of: repetitions) { Workloads.oursFanIn(10_000) }
    let foundation = Measure.best(of: repetitions) { Workloads.foundationFanIn(10_000) }
    report.add(Row(name: "4. fan-in 10k", unit: .total, ours: ours, foundation: foundation))
    report.addTarget(issue: "Issue 26", Target(
        name: "4. fan-in 10k", unit: .total, ours: ours,
        peerName: "Foundation", peer: foundation, limit: 0.10, whenFiled: "0.18–0.21"))
}

if include("dag") {
    let dag = Measure.best(of: repetitions) { Workloads.oursRandomDAG(100_000) }
    report.add(Row(name: "5. random DAG 100k × 4 deps (ours only)", unit: .total, ours: dag))
    // Against our own independent operations of the same run (measured here if row 1 was not).
    let independent = oursIndependent100k ?? Measure.best(of: repetitions) { Workloads.oursIndependent(100_000) }
    report.addTarget(issue: "Issue 26", Target(
        name: "5. DAG 100k × 4 / independent 100k (ours)", unit: .total, ours: dag,
        peerName: "ours, independent", peer: independent, limit: 3.0, whenFiled: "9.2–10.3"))
}

if include("blocking") {
    report.add(Row(
        name: "6. 200 ops × 20 ms blocking", unit: .total,
        ours: Measure.best(of: repetitions) { Workloads.oursBlocking(200, milliseconds: 20) },
        foundation: Measure.seconds { Workloads.foundationBlocking(200, milliseconds: 20) },
        dispatch: Measure.seconds { Workloads.dispatchBlocking(200, milliseconds: 20) },
        taskGroup: await Measure.seconds { await Workloads.taskGroupBlocking(200, milliseconds: 20) }))
}

if include("blockop") {
    report.add(Row(
        name: "7. BlockOp 8 blocks × 50 ms", unit: .total,
        ours: Measure.best(of: repetitions) { Workloads.oursBlockOp(blocks: 8, milliseconds: 50) },
        foundation: Measure.best(of: repetitions) { Workloads.foundationBlockOp(blocks: 8, milliseconds: 50) }))
}

if include("memory") {
    // Each side in a fresh child process, so that neither sees the other's heap.
    func bytesPerOperation(_ side: String) -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = ["memory", side, "1000000"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try? process.run()
        process.waitUntilExit()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return Double(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? .nan
    }
    let ours = bytesPerOperation("ours")
    let foundation = bytesPerOperation("foundation")
    report.add(Row(name: "8. 1M pending ops, resident memory", unit: .bytesPerOperation, ours: ours, foundation: foundation))
    report.addTarget(issue: "Issue 26", Target(
        name: "8. 1M pending, peak memory", unit: .bytesPerOperation, ours: ours,
        peerName: "Foundation", peer: foundation, limit: 0.12, whenFiled: "0.14"))
}

if include("latency") {
    // Sampled in turn, one of each per round: see `interleavedStartLatencies`.
    let latencies = Workloads.interleavedStartLatencies(samples: 2_000)
    let (ours, foundation, dispatch, wake) = (latencies.ours, latencies.foundation, latencies.dispatch, latencies.floor)
    for (label, percentile) in [("p50", 50.0), ("p99", 99.0)] {
        report.add(Row(
            name: "9. start latency, idle queue, \(label)", unit: .total,
            ours: Double(Workloads.percentile(ours, percentile)) / 1e9,
            foundation: Double(Workloads.percentile(foundation, percentile)) / 1e9,
            dispatch: Double(Workloads.percentile(dispatch, percentile)) / 1e9))
    }
    // The floor: how long the kernel takes to wake a thread blocked in a semaphore, measured the
    // same way. No pool whose idle workers sleep starts work sooner.
    report.addTarget(issue: "Issue 26", Target(
        name: "9. start latency p50 / kernel wake floor p50", unit: .total,
        ours: Double(Workloads.percentile(ours, 50)) / 1e9,
        peerName: "floor", peer: Double(Workloads.percentile(wake, 50)) / 1e9, limit: 1.1, whenFiled: "1.2–2.9"))
    report.addTarget(issue: "Issue 26", Target(
        name: "9. start latency p99 / Foundation's p99", unit: .total,
        ours: Double(Workloads.percentile(ours, 99)) / 1e9,
        peerName: "Foundation", peer: Double(Workloads.percentile(foundation, 99)) / 1e9, limit: 1.0, whenFiled: "1.15–2.5"))
    report.addNote(String(
        format: "Row 9's floor: a thread blocked in a semaphore wakes %.1f µs (p50) and %.1f µs (p99) after it is signalled; DispatchQueue.global() starts a block %.1f µs (p50) after it is submitted. The four are sampled in turn, one of each per round.",
        Double(Workloads.percentile(wake, 50)) / 1e3, Double(Workloads.percentile(wake, 99)) / 1e3,
        Double(Workloads.percentile(dispatch, 50)) / 1e3))
}

if include("groups") {
    report.addCost(CostRow(
        name: "10. 10k groups × 10 children",
        with: Measure.best(of: repetitions) { Workloads.oursGroups(10_000, children: 10) },
        without: Measure.best(of: repetitions) { Workloads.oursUngrouped(10_000, children: 10) }))
}

if include("conditions") {
    report.addCost(CostRow(
        name: "11. 100k ops × 1 passing condition",
        with: Measure.best(of: repetitions) { Workloads.oursConditioned(100_000) },
        without: Measure.best(of: repetitions) { Workloads.oursUnconditioned(100_000) }))
}

if include("delays") {
    // Foundation has no delay operation: a sleeping block would hold a thread per wait.
    report.add(Row(
        name: "12. 10k delays × 100 ms at once", unit: .total,
        ours: Measure.best(of: repetitions) { Workloads.oursDelays(10_000, milliseconds: 100) },
        dispatch: Measure.best(of: repetitions) { Workloads.dispatchDelays(10_000, milliseconds: 100) },
        taskGroup: await Measure.seconds { await Workloads.taskGroupDelays(10_000, milliseconds: 100) }))
}

if include("injection") {
    report.addCost(CostRow(
        name: "13. 50k producer → consumer injections",
        with: Measure.best(of: repetitions) { Workloads.oursInjected(50_000) },
        without: Measure.best(of: repetitions) { Workloads.oursDependentPairs(50_000) }))
}

if include("async") {
    // Issue 23's three ratios, each against its peer, printed with its target under the table.
    // Row 15's peer is swift-async-queue's FIFOQueue when SWIFT_ASYNC_QUEUE_PATH built it; the
    // AsyncStream stand-in is measured either way.
    let count = 100_000
    let serial = Measure.best(of: repetitions) { Workloads.oursAsyncSerial(count) }
    let stream = await Measure.best(of: repetitions) { await Workloads.fifoAsyncSerial(count) }
    #if ASYNC_QUEUE_PEER
    let fifoQueue: Double? = await Measure.best(of: repetitions) { await AsyncQueuePeer.fifoQueueAsyncSerial(count) }
    #else
    let fifoQueue: Double? = nil
    #endif
    report.add(Row(
        name: "15. async width-1 100k", unit: .perOperation(count),
        ours: serial, fifo: stream, fifoQueue: fifoQueue))
    // The same operations waited for once (a barrier), not one by one as
    // addOperations(_:waitUntilFinished: true) waits: what the per-operation wait costs.
    let serialOneWait = Measure.best(of: repetitions) { Workloads.oursAsyncSerialOneWait(count) }
    report.add(Row(
        name: "15b. the same, waited for once (barrier)", unit: .perOperation(count),
        ours: serialOneWait, fifo: stream, fifoQueue: fifoQueue))
    let serialAwaited = await Measure.best(of: repetitions) { await Workloads.oursAsyncSerialAwaited(count) }
    report.add(Row(
        name: "15c. the same, from async code, awaited once", unit: .perOperation(count),
        ours: serialAwaited, fifo: stream, fifoQueue: fifoQueue))
    report.addTarget(issue: "Issue 23", Target(
        name: "15. async width-1 100k", unit: .perOperation(count), ours: serial,
        peerName: "FIFOQueue", peer: fifoQueue, limit: 0.25, whenFiled: "0.26–0.32",
        missingNote: "Row 15: swift-async-queue's FIFOQueue is not built (set SWIFT_ASYNC_QUEUE_PATH to a checkout of it: see README.md); " +
            "ours / the AsyncStream stand-in is in the table above, and is not the issue's ratio."))
    let independent = Measure.best(of: repetitions) { Workloads.oursAsyncIndependent(count) }
    let group = await Measure.best(of: repetitions) { await Workloads.taskGroupAsyncIndependent(count) }
    report.add(Row(
        name: "16. async independent 100k", unit: .perOperation(count),
        ours: independent, taskGroup: group))
    let independentOneWait = Measure.best(of: repetitions) { Workloads.oursAsyncIndependentOneWait(count) }
    report.add(Row(
        name: "16b. the same, waited for once (barrier)", unit: .perOperation(count),
        ours: independentOneWait, taskGroup: group))
    let independentAwaited = await Measure.best(of: repetitions) { await Workloads.oursAsyncIndependentAwaited(count) }
    report.add(Row(
        name: "16c. the same, from async code, awaited once", unit: .perOperation(count),
        ours: independentAwaited, taskGroup: group))
    report.addTarget(issue: "Issue 23", Target(
        name: "16. async independent 100k", unit: .perOperation(count), ours: independent,
        peerName: "TaskGroup", peer: group, limit: 1.0, whenFiled: "1.63–1.72"))
    let sleeping = Measure.best(of: repetitions) { Workloads.oursAsyncSleeping(2_000, milliseconds: 1, width: 8) }
    let groupSleeping = await Measure.best(of: repetitions) { await Workloads.taskGroupAsyncSleeping(2_000, milliseconds: 1, width: 8) }
    report.add(Row(
        name: "17. async 2k × sleep 1 ms, width 8", unit: .total,
        ours: sleeping, taskGroup: groupSleeping))
    report.addTarget(issue: "Issue 23", Target(
        name: "17. async 2k × sleep 1 ms, width 8", unit: .total, ours: sleeping,
        peerName: "TaskGroup", peer: groupSleeping, limit: 1.0, whenFiled: "1.01–1.03"))
}

if include("qos") {
    // Median of five runs each: one sample per run (the backlog takes a moment to set up).
    func median(_ body: () -> UInt64) -> Double {
        let samples = (0..<5).map { _ in body() }.sorted()
        return Double(samples[samples.count / 2]) / 1e9
    }
    report.add(Row(
        name: "18. QoS: user-initiated start behind 1k background ops, both cores busy (median)", unit: .total,
        ours: median { Workloads.oursQualityOfServiceLatency() },
        foundation: median { Workloads.foundationQualityOfServiceLatency() },
        dispatch: median { Workloads.dispatchQualityOfServiceLatency() }))
}

if include("tracing") {
    report.addCost(CostRow(
        name: "14. 100k ops recorded by OpTrace (+ JSON and summary)",
        with: Measure.best(of: repetitions) { Workloads.oursTraced(100_000) },
        without: Measure.best(of: repetitions) { Workloads.oursUntraced(100_000) }))
}

if include("limits") {
    // Issue 24: a limit of 4 shared by 4 queues against one queue of width 4.
    let count = 100_000
    let limited = Measure.best(of: repetitions) { Workloads.oursLimitedAcrossQueues(count) }
    let width4 = Measure.best(of: repetitions) { Workloads.oursWidthLimited(count) }
    report.addCost(CostRow(
        name: "19. 100k ops × limited(\"x\", permits: 4) over 4 queues, against one width-4 queue",
        with: limited, without: width4))
    report.addTarget(issue: "Issue 24", Target(
        name: "19. limited(permits: 4) over 4 queues / one width-4 queue", unit: .perOperation(count), ours: limited,
        peerName: "width-4 queue", peer: width4, limit: 1.5, whenFiled: "new"))
    // Where the difference lies: the same 4 queues without the condition, and the condition on
    // the one width-4 queue.
    report.addCost(CostRow(
        name: "19b. the same over 4 queues without the condition, against one width-4 queue",
        with: Measure.best(of: repetitions) { Workloads.oursLimitedAcrossQueues(count, condition: .some(nil)) },
        without: width4))
    report.addCost(CostRow(
        name: "19c. limited(\"x\", permits: 4) on one width-4 queue, against it without the condition",
        with: Measure.best(of: repetitions) { Workloads.oursLimitedAcrossQueues(count, queues: 1, width: 4) },
        without: width4))
    report.addCost(CostRow(
        name: "19d. a passing predicate instead, over 4 queues, against one width-4 queue",
        with: Measure.best(of: repetitions) { Workloads.oursLimitedAcrossQueues(count, condition: .predicate("always") { _ in true }) },
        without: width4))
}

report.print()
