import Operations

// STUB: to be replaced by the real example.
enum SerialQueueExample {
    static let example = Example(
        name: "serial-queue",
        title: "(stub)",
        source: "guide",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
