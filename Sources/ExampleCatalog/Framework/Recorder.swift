
/// An append-only list that any thread may append to, for examples that record what their jobs
/// did and print it once the jobs are done.
final class Recorder<Element: Sendable>: Sendable {
    private let elements = Locked<[Element]>([])

    /// Adds `element` at the end.
    func append(_ element: Element) {
        elements.withLock { $0.append(element) }
    }

    /// Everything appended so far, in the order it was appended.
    var all: [Element] {
        elements.withLock { $0 }
    }
}
