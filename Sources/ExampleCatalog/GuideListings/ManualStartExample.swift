import Operations

// STUB: to be replaced by the real example.
enum ManualStartExample {
    static let example = Example(
        name: "running-manually",
        title: "(stub)",
        source: "Listing 2-8",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
