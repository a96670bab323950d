import Operations

// STUB: to be replaced by the real example.
enum InvocationOperationExample {
    static let example = Example(
        name: "invocation-operation",
        title: "(stub)",
        source: "Listing 2-1",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
