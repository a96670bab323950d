import Operations

// STUB: to be replaced by the real example.
enum BarrierExample {
    static let example = Example(
        name: "barrier",
        title: "(stub)",
        source: "guide",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
