/// The ``OpObserver`` a queue with ``OpQueueObserver``s attaches to each operation it takes: it
/// passes the operation's finish on to the queue's observers.
struct QueueObserverRelay: OpObserver {
    let queue: OpQueue
    let observers: [any OpQueueObserver]

    func willFinish(_ operation: Op, error: (any Error)?) {
        for observer in observers { observer.willFinish(queue, operation: operation, error: error) }
    }

    func didFinish(_ operation: Op, error: (any Error)?) {
        for observer in observers { observer.didFinish(queue, operation: operation, error: error) }
    }
}
