/// Something done from a callback that the library makes (an observer, a completion block).
enum ModelCallback: String, Codable, Hashable, Sendable, CaseIterable {
    /// The completion block waits for its own operation (returns at once).
    case completionWaits
    /// An observer of `isFinished` waits for its operation when it turns `true` (returns at once).
    case isFinishedObserverWaits
    /// An `OpObserver`'s `didFinish` waits for its operation (returns at once).
    case didFinishWaits
    /// An `OpObserver`'s `willExecute` cancels its operation: the body still runs, cancelled.
    case cancelInWillExecute
    /// An observer of `isExecuting`, when it turns `true`, registers an observer of `isFinished`
    /// with `[.old, .new]`, which must hear the finish exactly once.
    case observeFinishFromExecutingHandler

    var swift: String {
        switch self {
        case .completionWaits: "completionBlock = { op.waitUntilFinished() }"
        case .isFinishedObserverWaits: "observe(\\.isFinished) { op, _ in op.waitUntilFinished() }"
        case .didFinishWaits: "addObserver(BlockObserver(didFinish: { op, _ in op.waitUntilFinished() }))"
        case .cancelInWillExecute: "addObserver(BlockObserver(willExecute: { $0.cancel() }))"
        case .observeFinishFromExecutingHandler: "observe(\\.isExecuting) { op, _ in tokens += op.observe(\\.isFinished, options: [.old, .new]) { ... } }"
        }
    }
}
