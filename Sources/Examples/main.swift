import ExampleCatalog

// `swift run examples` lists the examples; `swift run examples <name>` runs one;
// `swift run examples all` runs every one, in order.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Prints the examples as a table: name, source, title.
func listExamples() {
    let width = Catalog.all.map(\.name.count).max() ?? 0
    print("Usage: swift run examples <name> | all\n")
    for example in Catalog.all {
        let padding = String(repeating: " ", count: width - example.name.count)
        print("  \(example.name)\(padding)  \(example.title) (\(example.source))")
    }
}

/// Runs `example`, echoing its lines; says whether it printed every line it promises.
func run(_ example: Example) async -> Bool {
    print("== \(example.name): \(example.title) (\(example.source))")
    let output = ExampleOutput(echoes: true)
    do {
        try await example.run(printingTo: output)
    } catch {
        print("\(example.name) failed: \(error)")
        return false
    }
    let missing = example.missingLines(in: output.lines)
    if !missing.isEmpty {
        print("\(example.name) did not print, in order: \(missing)")
        return false
    }
    return true
}

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case nil, "--help", "-h", "help", "list":
    listExamples()
case "all":
    var failed: [String] = []
    for example in Catalog.all {
        if !(await run(example)) { failed.append(example.name) }
        print("")
    }
    if !failed.isEmpty {
        print("failed: \(failed.joined(separator: ", "))")
        exit(1)
    }
case let name?:
    guard let example = Catalog.example(named: name) else {
        print("There is no example called \"\(name)\".\n")
        listExamples()
        exit(2)
    }
    if !(await run(example)) { exit(1) }
}
