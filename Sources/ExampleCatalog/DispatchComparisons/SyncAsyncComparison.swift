import Operations

// STUB: to be replaced by the real example.
enum SyncAsyncComparison {
    static let example = Example(
        name: "gcd-sync-async",
        title: "(stub)",
        source: "GCD",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
