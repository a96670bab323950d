import Operations

// STUB: to be replaced by the real example.
enum WaitingExample {
    static let example = Example(
        name: "waiting",
        title: "(stub)",
        source: "guide",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
