import Operations

// STUB: to be replaced by the real example.
enum ConcurrentPerformComparison {
    static let example = Example(
        name: "gcd-concurrent-perform",
        title: "(stub)",
        source: "GCD",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
