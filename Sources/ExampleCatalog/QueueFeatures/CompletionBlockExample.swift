import Operations

// STUB: to be replaced by the real example.
enum CompletionBlockExample {
    static let example = Example(
        name: "completion-blocks",
        title: "(stub)",
        source: "guide",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
