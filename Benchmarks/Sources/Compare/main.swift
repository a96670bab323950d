import Dispatch
import Foundation
import Operations

// Runs our OpQueue and its peers (Foundation's OperationQueue, Dispatch, a TaskGroup) on the same
// workloads in one process and prints the times and the ratio ours / Foundation.
//
//     swift run -c release compare            all workloads
//     swift run -c release compare chain      workloads whose name contains "chain"
//     REPEAT=5 swift run -c release compare   best of 5 runs (default 3)

// `compare profile <workload>` runs only our side of one workload ten times (for a profiler).
if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "profile" {
    let workload = CommandLine.arguments[2]
    for _ in 0..<10 {
        switch workload {
        case "independent": Workloads.oursIndependent(100_000)
        case "width-1": Workloads.oursSerial(100_000)
        case "chain": Workloads.oursChain(10_000)
        default: fatalError("unknown workload \(workload)")
        }
    }
    exit(0)
}

let filter = CommandLine.arguments.dropFirst().first
let repetitions = Int(ProcessInfo.processInfo.environment["REPEAT"] ?? "") ?? 3
var report = Report()

func include(_ name: String) -> Bool {
    guard let filter else { return true }
    return name.contains(filter)
}

if include("independent") {
    let count = 100_000
    report.add(
        Row(name: "1. independent 100k", unit: .perOperation(count),
            ours: Measure.best(of: repetitions) { Workloads.oursIndependent(count) },
            foundation: Measure.best(of: repetitions) { Workloads.foundationIndependent(count) },
            dispatch: Measure.best(of: repetitions) { Workloads.dispatchIndependent(count) },
            taskGroup: await Measure.best(of: repetitions) { await Workloads.taskGroupIndependent(count) }))
}

if include("width-1") {
    let count = 100_000
    report.add(
        Row(name: "2. width-1 100k", unit: .perOperation(count),
            ours: Measure.best(of: repetitions) { Workloads.oursSerial(count) },
            foundation: Measure.best(of: repetitions) { Workloads.foundationSerial(count) },
            dispatch: Measure.best(of: repetitions) { Workloads.dispatchSerial(count) }))
}

if include("chain") {
    // Foundation's scheduler is quadratic here: one run of 10,000 takes tens of seconds.
    let count = 10_000
    report.add(
        Row(name: "3. chain 10k", unit: .total,
            ours: Measure.best(of: repetitions) { Workloads.oursChain(count) },
            foundation: Measure.seconds { Workloads.foundationChain(count) }))
    report.add(
        Row(name: "3. chain 100k (ours only)", unit: .total,
            ours: Measure.best(of: repetitions) { Workloads.oursChain(100_000) }))
}

report.print()
