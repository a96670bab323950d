import Dispatch

extension TaskPriority {
    /// The task priority that matches a Dispatch quality-of-service class, or `nil` for
    /// `.unspecified` (the task then inherits its priority).
    init?(_ qualityOfService: DispatchQoS.QoSClass) {
        switch qualityOfService {
        case .userInteractive: self = .high
        case .userInitiated: self = .userInitiated
        case .default: self = .medium
        case .utility: self = .utility
        case .background: self = .background
        case .unspecified: return nil
        @unknown default: return nil
        }
    }

    /// The priority of the task of an operation's `async` work: the one that matches
    /// `qualityOfService`, one step higher within that class for a ``Op/QueuePriority/high`` or
    /// ``Op/QueuePriority/veryHigh`` `queuePriority`, one step lower for a
    /// ``Op/QueuePriority/low`` or ``Op/QueuePriority/veryLow`` one. The step never leaves the
    /// class: ``OpTaskExecutor`` runs the task's jobs at `qualityOfService` whatever the step.
    /// `nil` for an `.unspecified` quality of service (the task inherits its priority).
    init?(_ qualityOfService: DispatchQoS.QoSClass, queuePriority: Op.QueuePriority) {
        guard let base = TaskPriority(qualityOfService) else { return nil }
        let step: Int = switch queuePriority {
        case .veryHigh, .high: 1
        case .normal: 0
        case .low, .veryLow: -1
        }
        self.init(rawValue: UInt8(Int(base.rawValue) + step))
    }
}
