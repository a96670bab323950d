import Operations

// STUB: to be replaced by the real example.
enum NonConcurrentOperationExample {
    static let example = Example(
        name: "non-concurrent-operation",
        title: "(stub)",
        source: "Listing 2-3",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
