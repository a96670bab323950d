import Operations

// STUB: to be replaced by the real example.
enum SemaphoreComparison {
    static let example = Example(
        name: "gcd-semaphore",
        title: "(stub)",
        source: "GCD",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
