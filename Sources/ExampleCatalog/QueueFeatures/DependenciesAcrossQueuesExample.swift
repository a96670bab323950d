import Operations

// STUB: to be replaced by the real example.
enum DependenciesAcrossQueuesExample {
    static let example = Example(
        name: "dependencies-across-queues",
        title: "(stub)",
        source: "guide",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
