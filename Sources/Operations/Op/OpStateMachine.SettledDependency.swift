extension OpStateMachine {
    /// A dependency of a finished operation: one that could be on a loop of dependencies among
    /// finished operations is held weakly, so that the loop does not keep them alive (see
    /// ``Op/settleDependencies()``).
    enum SettledDependency {
        /// A dependency still held.
        case strong(Op)
        /// A dependency held weakly.
        case weak(WeakOp)

        /// The operation, if it is still alive.
        var operation: Op? {
            switch self {
            case .strong(let operation): operation
            case .weak(let reference): reference.operation
            }
        }

        /// Whether this names `operation` (compared without loading a weak reference).
        func names(_ operation: Op) -> Bool {
            switch self {
            case .strong(let held): held === operation
            case .weak(let reference): reference.serial == operation.serial
            }
        }
    }
}
