import Operations

// STUB: to be replaced by the real example.
enum ConcurrentQueueComparison {
    static let example = Example(
        name: "gcd-concurrent-queue",
        title: "(stub)",
        source: "GCD",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
