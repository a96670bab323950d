extension ObserverRegistry {
    /// Something to tell an object's observers.
    enum Event {
        /// A property changed: the observations of that property registered before it hear of it.
        case change(Record)
        /// The first call of an observation that asked for ``ObservingOptions/initial``: only it
        /// is told, with the property's value as it is delivered.
        case initial(Entry)
        /// An ``OpObserver`` was added: only it is told (``OpObserver/didAttach(to:)``).
        case didAttach(any OpObserver)
        /// ``OpObserver/willExecute(_:)``.
        case willExecute
        /// ``OpObserver/didExecute(_:)``.
        case didExecute
        /// ``OpObserver/didCancel(_:error:)``.
        case didCancel(error: (any Error)?)
        /// ``OpObserver/willFinish(_:error:)``.
        case willFinish(error: (any Error)?)
        /// ``OpObserver/didFinish(_:error:)``.
        case didFinish(error: (any Error)?)
        /// ``OpObserver/didProduce(_:operation:)``.
        case didProduce(Op)
        /// ``OpObserver/willAdd(_:operation:)``: delivered before the operation is added.
        case willAdd(Op)
        /// ``OpObserver/didAdd(_:operation:)``.
        case didAdd(Op)

        /// Whether the operation cannot move on until the event was delivered, when it comes
        /// before its body runs or before it reads as finished: `willExecute` and `willFinish`
        /// (except a `willFinish` that comes once the operation reads as finished already).
        var holdsOperation: Bool {
            switch self {
            case .willExecute, .willFinish, .willAdd: true
            case .change, .initial, .didAttach, .didExecute, .didCancel, .didFinish, .didProduce, .didAdd: false
            }
        }
    }
}
