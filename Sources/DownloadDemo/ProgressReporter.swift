import Operations
import Synchronization

/// Logs a queue's ``OpProgress`` each time another quarter of its work is done; fed by an
/// observer of the queue's `operationCount`.
final class ProgressReporter: Sendable {
    private let label: String
    private let quartersReported = Mutex(0)

    /// Creates a reporter whose lines start with `label`.
    init(label: String) {
        self.label = label
    }

    /// Logs `progress` if it has reached a quarter not logged yet.
    func update(_ progress: OpProgress) {
        let completed = progress.completedUnitCount
        let total = progress.totalUnitCount
        guard total > 0 else { return }
        let quarters = Int(completed * 4 / total)
        let isNew = quartersReported.withLock { reported in
            guard quarters > reported else { return false }
            reported = quarters
            return true
        }
        if isNew {
            Console.log("progress: \(label) \(completed) of \(total) units (\(Format.percent(completed, of: total)))")
        }
    }
}
