// Observers of a whole queue (see `OpQueueObserver`).

extension OpQueue {
    /// Adds an observer of the queue's operations: it hears of each operation added from now on,
    /// before and after it is added, and as it finishes (see ``OpQueueObserver``). Observers are
    /// kept for the queue's life, and told in the order they were added.
    public final func addObserver(_ observer: any OpQueueObserver) {
        queueObservers.withLockedValue { $0.append(observer) }
        hasQueueObservers.store(true, ordering: .relaxed)
    }

    /// Tells the queue's observers that `operations` are about to be added, and attaches the
    /// relay of their finish to each. Returns the observers, to tell of the adds afterwards.
    /// No lock is held: the observers' code runs here.
    final func announceAdding<Operations: Collection<Op>>(_ operations: Operations) -> [any OpQueueObserver] {
        let observers = queueObservers.withLockedValue { $0 }
        guard !observers.isEmpty else { return [] }
        for operation in operations {
            for observer in observers { observer.willAdd(self, operation: operation) }
            operation.addObserver(QueueObserverRelay(queue: self, observers: observers))
        }
        return observers
    }
}
