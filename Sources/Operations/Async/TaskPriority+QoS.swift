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
}
