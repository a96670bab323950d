import Operations

// STUB: to be replaced by the real example.
enum GroupComparison {
    static let example = Example(
        name: "gcd-group",
        title: "(stub)",
        source: "GCD",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
