import Operations

// STUB: to be replaced by the real example.
enum ConcurrentOperationExample {
    static let example = Example(
        name: "concurrent-operation",
        title: "(stub)",
        source: "Listings 2-5 to 2-7",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
