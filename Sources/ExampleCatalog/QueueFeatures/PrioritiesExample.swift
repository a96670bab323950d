import Operations

// STUB: to be replaced by the real example.
enum PrioritiesExample {
    static let example = Example(
        name: "priorities-and-qos",
        title: "(stub)",
        source: "guide",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
