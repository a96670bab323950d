import Operations

// STUB: to be replaced by the real example.
enum BlockOperationExample {
    static let example = Example(
        name: "block-operation",
        title: "(stub)",
        source: "Listing 2-2",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
