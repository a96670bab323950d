import Operations

// STUB: to be replaced by the real example.
enum ObservingStateExample {
    static let example = Example(
        name: "observing-state",
        title: "(stub)",
        source: "guide",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
