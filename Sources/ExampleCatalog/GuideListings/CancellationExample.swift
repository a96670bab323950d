import Operations

// STUB: to be replaced by the real example.
enum CancellationExample {
    static let example = Example(
        name: "responding-to-cancellation",
        title: "(stub)",
        source: "Listing 2-4",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
