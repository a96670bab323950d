import ExampleCatalog
import Testing

/// Runs every example of the `examples` executable and checks its output.
@Suite("Examples")
struct ExamplesTests {
    @Test("every example prints what it promises", .timeLimit(.minutes(1)), arguments: Catalog.all.map(\.name))
    func examplePrintsWhatItPromises(name: String) async throws {
        let example = try #require(Catalog.example(named: name))
        let output = ExampleOutput(echoes: false)
        try await example.run(printingTo: output)
        let missing = example.missingLines(in: output.lines)
        #expect(missing.isEmpty, "\(name) did not print, in order, \(missing); it printed:\n\(output.lines.joined(separator: "\n"))")
    }

    @Test("example names are unique and every example promises some output")
    func namesAreUniqueAndExpectationsPresent() {
        let names = Catalog.all.map(\.name)
        #expect(Set(names).count == names.count)
        for example in Catalog.all {
            #expect(!example.expected.isEmpty, "\(example.name) promises no output")
            #expect(!example.title.isEmpty && !example.source.isEmpty)
        }
    }

    @Test("the check finds lines in order, with others between them, and reports what is missing")
    func orderedLineCheck() {
        let example = Example(name: "check", title: "t", source: "s", expected: ["a", "c"]) { _ in }
        #expect(example.missingLines(in: ["a", "b", "c"]).isEmpty)
        #expect(example.missingLines(in: ["c", "a"]) == ["c"])
        #expect(example.missingLines(in: ["b"]) == ["a", "c"])
    }
}
