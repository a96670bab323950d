import Operations

// STUB: to be replaced by the real example.
enum SuspendingExample {
    static let example = Example(
        name: "suspending-a-queue",
        title: "(stub)",
        source: "guide",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
