import Operations

// STUB: to be replaced by the real example.
enum SerialQueueComparison {
    static let example = Example(
        name: "gcd-serial-queue",
        title: "(stub)",
        source: "GCD",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
