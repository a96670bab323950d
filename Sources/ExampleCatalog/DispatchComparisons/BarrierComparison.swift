import Operations

// STUB: to be replaced by the real example.
enum BarrierComparison {
    static let example = Example(
        name: "gcd-barrier",
        title: "(stub)",
        source: "GCD",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
