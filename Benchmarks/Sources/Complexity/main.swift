import Foundation

// The complexity checks: every structure of the library that grows with N is timed at N and 2N,
// and the run fails (exit status 1) if one grows faster than N log N allows, or if a structure
// that should stay the size of what is in it keeps memory for what went through it. Then the
// figures issue 22 names, at its sizes. See Verdicts.swift for the bounds and the README for
// what each row grows.
//
//     swift run -c release complexity                    every check and figure, about 2 minutes
//     swift run -c release complexity exclusivity chain  the rows whose name contains a word
//     swift run -c release complexity --size 20000 dependents    at a given N (no search for one)
//     swift run -c release complexity --repeat 9         runs of each size per measurement (5)
//     swift run -c release complexity --skip figure      all but the rows whose name contains a word
//     swift run -c release complexity --list             the rows' names
//     swift run -c release complexity --soak 20000000    the soak of a never-empty queue: that many
//                                                        operations through it, heap flat (Soak.swift)
//
// Each measurement runs in a child process (`complexity --child ...`): a row whose workload
// traps or hangs fails alone, and every row starts with a fresh heap.

var arguments = Array(CommandLine.arguments.dropFirst())

if arguments.first == "--child" {
    // growth NAME [N] REPETITIONS | pair A NA B NB REPETITIONS
    let child = Array(arguments.dropFirst())
    switch child.first {
    case "growth" where child.count == 3 || child.count == 4:
        guard let check = Catalog.growth.first(where: { $0.name == child[1] }), let repetitions = Int(child.last!) else {
            exit(2)
        }
        Child.growth(check, n: child.count == 4 ? Int(child[2]) : nil, repetitions: repetitions)
    case "pair" where child.count == 6:
        guard let na = Int(child[2]), let nb = Int(child[4]), let repetitions = Int(child[5]) else { exit(2) }
        Child.pair(Arm(workload: child[1], n: na), Arm(workload: child[3], n: nb), repetitions: repetitions)
    default:
        print("usage: complexity --child growth NAME [N] REPETITIONS | pair A NA B NB REPETITIONS")
        exit(2)
    }
    exit(0)
}

if arguments.first == "--soak" {
    guard arguments.count == 2, let operations = Int(arguments[1]), operations >= 1_000 else {
        print("usage: complexity --soak OPERATIONS (at least 1000)")
        exit(2)
    }
    exit(Soak.run(operations: operations) ? 0 : 1)
}

var checks = Checks()
var filters: [String] = []
var skipped: [String] = []
while let argument = arguments.first {
    arguments.removeFirst()
    switch argument {
    case "--size":
        guard let value = arguments.first.flatMap({ Int($0) }), value > 0 else {
            print("--size takes a positive number")
            exit(2)
        }
        arguments.removeFirst()
        checks.pinnedN = value
    case "--repeat":
        guard let value = arguments.first.flatMap({ Int($0) }), value > 0 else {
            print("--repeat takes a positive number")
            exit(2)
        }
        arguments.removeFirst()
        checks.repetitions = value
    case "--skip":
        guard let value = arguments.first else {
            print("--skip takes a word")
            exit(2)
        }
        arguments.removeFirst()
        skipped.append(value)
    case "--list":
        for check in Catalog.growth { print("\(check.name): \(check.grows)") }
        for figure in Catalog.figures { print("\(figure.name): \(figure.wanted)") }
        exit(0)
    default:
        filters.append(argument)
    }
}

@MainActor func selected(_ name: String) -> Bool {
    (filters.isEmpty || filters.contains { name.contains($0) }) && !skipped.contains { name.contains($0) }
}

let clock = Date()
var growthRows: [Checks.GrowthRow] = []
for check in Catalog.growth where selected(check.name) {
    let started = Date()
    let row = checks.run(check)
    growthRows.append(row)
    print(String(format: "measured in %.0f s ", Date().timeIntervalSince(started)) + Table.line(row))
    fflush(nil)
}

var figureRows: [Checks.FigureRow] = []
// The figures are at the issue's sizes: a pinned N is for the growth checks only.
for figure in Catalog.figures where selected(figure.name) {
    let started = Date()
    let row = checks.run(figure)
    figureRows.append(row)
    print(String(format: "measured in %.0f s ", Date().timeIntervalSince(started)) + Table.line(row))
    fflush(nil)
}

if growthRows.isEmpty && figureRows.isEmpty {
    print("no check is named like \(filters.joined(separator: " or ")); see --list")
    exit(2)
}

print("")
if !growthRows.isEmpty {
    Table.printGrowth(growthRows)
    print("")
    print("t(N), t(2N): fastest of the runs at N and at 2N. Limit: t(2N)/t(N) ≤ \(Table.fixed(Verdicts.growthLimit)) "
        + "(N log N gives about 2.1–2.2, N² 4), by CPU time; a CPU ratio less than "
        + "\(Table.fixed(Verdicts.noiseMargin * Verdicts.growthLimit)) fails only if the wall-clock ratio is over the limit too. "
        + "t(N) and t(2N) are CPU times of the whole process (fastest run). "
        + "Heap gained: over the second half of the run at N and of the run at 2N; at 2N it may be at most "
        + "\(Verdicts.keptBytesPerOperation) byte per operation of that half, plus 64 KiB.")
    print("")
}
if !figureRows.isEmpty {
    Table.printFigures(figureRows)
    print("")
}
let failed = growthRows.filter { !$0.passes }.map(\.check.name) + figureRows.filter { !$0.passes }.map(\.figure.name)
print(String(format: "%.0f s in all. ", Date().timeIntervalSince(clock))
    + (failed.isEmpty ? "Every check passed." : "Failed: \(failed.joined(separator: ", ")).") )
exit(failed.isEmpty ? 0 : 1)
