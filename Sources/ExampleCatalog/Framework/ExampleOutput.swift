
/// Where an example prints: whole lines, from any thread, kept in the order they were printed,
/// and echoed to standard output if asked to.
public final class ExampleOutput: Sendable {
    private let printed = Locked<[String]>([])
    private let echoes: Bool

    /// An output that keeps its lines and, if `echoes`, prints each one as it comes.
    public init(echoes: Bool) {
        self.echoes = echoes
    }

    /// Prints one line (or several, separated by newlines).
    public func line(_ text: String) {
        printed.withLock { lines in
            lines.append(contentsOf: text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
            if echoes { print(text) }
        }
    }

    /// Every line printed so far, in order.
    public var lines: [String] {
        printed.withLock { $0 }
    }
}
