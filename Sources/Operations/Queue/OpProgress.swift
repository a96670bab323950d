import Synchronization

/// The progress of the operations of a queue, the counterpart of the `Progress` object that
/// Foundation's `OperationQueue.progress` returns.
///
/// A queue does not report progress until you set ``totalUnitCount``. From then on, every
/// operation that leaves the queue (it finished and its completion block returned; barrier blocks
/// count too) adds one to ``completedUnitCount``. Avoid backward
/// progress: when you add more operations, raise ``totalUnitCount`` accordingly.
public final class OpProgress: Sendable, CustomStringConvertible {
    private let state = LockedBox(State())

    private struct State {
        var totalUnitCount: Int64 = 0
        var completedUnitCount: Int64 = 0
        var isReporting = false
    }

    init() {}

    /// The number of operations the progress is about. Setting it starts the reporting.
    public var totalUnitCount: Int64 {
        get { state.withLockedValue { $0.totalUnitCount } }
        set {
            state.withLockedValue {
                $0.totalUnitCount = newValue
                $0.isReporting = true
            }
        }
    }

    /// The number of operations that finished since reporting started.
    public var completedUnitCount: Int64 {
        state.withLockedValue { $0.completedUnitCount }
    }

    /// `completedUnitCount / totalUnitCount`, or 0 while `totalUnitCount` is 0.
    public var fractionCompleted: Double {
        state.withLockedValue { state in
            state.totalUnitCount > 0 ? Double(state.completedUnitCount) / Double(state.totalUnitCount) : 0
        }
    }

    /// Whether every unit is completed.
    public var isFinished: Bool {
        state.withLockedValue { $0.totalUnitCount > 0 && $0.completedUnitCount >= $0.totalUnitCount }
    }

    /// "completed of total".
    public var description: String {
        state.withLockedValue { "\($0.completedUnitCount) of \($0.totalUnitCount)" }
    }

    func operationFinished() {
        state.withLockedValue { state in
            if state.isReporting { state.completedUnitCount += 1 }
        }
    }
}
