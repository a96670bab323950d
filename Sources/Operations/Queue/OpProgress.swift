import Synchronization

/// The progress of the operations of a queue, the counterpart of the `Progress` object that
/// Foundation's `OperationQueue.progress` returns.
///
/// A queue does not report progress until you set ``totalUnitCount``. From then on, every
/// operation that leaves the queue (it finished and its completion block returned; barrier blocks
/// count too) adds one to ``completedUnitCount``. Avoid backward progress: when you add more
/// operations, raise ``totalUnitCount`` accordingly.
public final class OpProgress: Sendable, CustomStringConvertible {
    // Atomics rather than a lock: every operation that leaves a queue checks `isReporting`.
    private let total = Atomic<Int64>(0)
    private let completed = Atomic<Int64>(0)
    private let isReporting = Atomic<Bool>(false)

    init() {}

    /// The number of operations the progress is about. Setting it starts the reporting.
    public var totalUnitCount: Int64 {
        get { total.load(ordering: .relaxed) }
        set {
            total.store(newValue, ordering: .relaxed)
            isReporting.store(true, ordering: .relaxed)
        }
    }

    /// The number of operations that finished since reporting started.
    public var completedUnitCount: Int64 {
        completed.load(ordering: .relaxed)
    }

    /// `completedUnitCount / totalUnitCount`, or 0 while `totalUnitCount` is 0.
    public var fractionCompleted: Double {
        let total = totalUnitCount
        return total > 0 ? Double(completedUnitCount) / Double(total) : 0
    }

    /// Whether every unit is completed.
    public var isFinished: Bool {
        let total = totalUnitCount
        return total > 0 && completedUnitCount >= total
    }

    /// "completed of total".
    public var description: String {
        "\(completedUnitCount) of \(totalUnitCount)"
    }

    func operationFinished() {
        // Relaxed: counters only; nothing else is published through them.
        if isReporting.load(ordering: .relaxed) {
            completed.add(1, ordering: .relaxed)
        }
    }
}
