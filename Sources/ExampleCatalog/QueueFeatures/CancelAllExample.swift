import Operations

// STUB: to be replaced by the real example.
enum CancelAllExample {
    static let example = Example(
        name: "cancelling-everything",
        title: "(stub)",
        source: "guide",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
