import Synchronization

/// The heap in use at two moments of a steady state (half-way through a run and at its end),
/// noted by whichever thread reaches each moment (an operation's body, an attempt's factory).
///
/// Both moments are inside one run, long after the previous run's structures were released: what
/// the heap gained between them is what the structure kept of the work that went through it.
final class HeapMarks: Sendable {
    private let start = Atomic<Int>(0)
    private let end = Atomic<Int>(0)

    /// Notes the heap in use now as the start of the steady state.
    func markStart() {
        start.store(Heap.bytesInUse, ordering: .releasing)
    }

    /// Notes the heap in use now as its end.
    func markEnd() {
        end.store(Heap.bytesInUse, ordering: .releasing)
    }

    /// The heap the steady state gained between the two marks.
    var kept: Int {
        end.load(ordering: .acquiring) - start.load(ordering: .acquiring)
    }
}
