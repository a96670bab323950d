import Dispatch

/// One runnable example: a listing of Apple's *Concurrency Programming Guide* ("Operation
/// Queues"), a queue feature, or a GCD idiom next to its `Operations` counterpart.
///
/// An example prints what it demonstrates to an ``ExampleOutput``. The `examples` executable
/// echoes those lines to standard output; the test suite runs every example and checks that the
/// lines of ``expected`` appear in its output, in that order.
public struct Example: Sendable {
    /// What the example's body is: plain synchronous code (which may block, as the guide's
    /// listings do), or `async` code.
    public enum Body: Sendable {
        /// Synchronous code, run on a thread of its own: it may block, and use the blocking
        /// waits (`waitUntilFinished()`, `waitUntilAllOperationsAreFinished()`).
        case sync(@Sendable (ExampleOutput) throws -> Void)
        /// `async` code, which uses the waits that suspend (`await op.waitUntilFinished()`).
        case async(@Sendable (ExampleOutput) async throws -> Void)
    }

    /// The name given to `swift run examples <name>`, such as `invocation-operation`.
    public let name: String
    /// What the example shows, in a few words.
    public let title: String
    /// Where the example comes from: a listing of the guide, a class reference, or a GCD idiom.
    public let source: String
    /// Lines the output must contain, in this order (other lines may come between them).
    public let expected: [String]
    /// The example itself.
    public let body: Body

    /// An example with synchronous code.
    public init(
        name: String, title: String, source: String, expected: [String],
        run: @escaping @Sendable (ExampleOutput) throws -> Void
    ) {
        self.name = name
        self.title = title
        self.source = source
        self.expected = expected
        self.body = .sync(run)
    }

    /// An example with `async` code.
    public init(
        name: String, title: String, source: String, expected: [String],
        runAsync: @escaping @Sendable (ExampleOutput) async throws -> Void
    ) {
        self.name = name
        self.title = title
        self.source = source
        self.expected = expected
        self.body = .async(runAsync)
    }

    /// Runs the example, printing to `output`.
    ///
    /// A synchronous body runs on a thread of its own (a serial Dispatch queue, which always gets
    /// one), never on a thread of Swift's cooperative pool: it may block, as the guide's listings
    /// do, and a blocked cooperative thread is one fewer for the `async` work it may wait for.
    public func run(printingTo output: ExampleOutput) async throws {
        switch body {
        case .sync(let run):
            let thread = DispatchQueue(label: "examples.\(name)")
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                thread.async {
                    continuation.resume(with: Result { try run(output) })
                }
            }
        case .async(let run):
            try await run(output)
        }
    }

    /// The lines of ``expected`` that `lines` lacks, in order: empty when every expected line
    /// appears, in this order, with any other lines between them.
    public func missingLines(in lines: [String]) -> [String] {
        var remaining = lines[...]
        var missing: [String] = []
        for line in expected {
            if let index = remaining.firstIndex(of: line) {
                remaining = remaining[remaining.index(after: index)...]
            } else {
                missing.append(line)
            }
        }
        return missing
    }
}
