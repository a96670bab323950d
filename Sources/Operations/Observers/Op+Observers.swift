import Dispatch

// Observers (`OpObserver`), cancelling with an error, and producing operations.

extension Op {
    /// Adds an observer, which is told about the operation's start, cancellation, finish and
    /// produced operations from now on (beginning with ``OpObserver/didAttach(to:)``).
    ///
    /// The operation keeps its observers until it has told them ``OpObserver/didFinish(_:error:)``,
    /// and then lets them go (an observer may hold its operation without keeping it alive for
    /// good). Adding one to a finished operation only attaches it. It may be called from anywhere,
    /// a callback of the same operation included (see
    /// <doc:ObservingOperations#Delivery-rules>).
    public final func addObserver(_ observer: any OpObserver) {
        // Registered inside a transition: it hears of the events queued from now on, and the
        // transition publishes the operation's `observed` flag. The transition delivers
        // `didAttach` once the lock is released.
        transition { machine in
            let keeps = !machine.isFinished
            machine.ensureObservers().add(observer, keeps: keeps)
        }
    }

    /// The operation whose body is running on the calling thread (or, in an ``AsyncOp``'s
    /// `async` body, in the current task), if any.
    ///
    /// A child of a ``GroupOp`` reaches its group through `Op.current?.group`.
    public static var current: Op? {
        ThreadContext.operation ?? currentTaskOperation
    }

    /// Cancels the operation, recording `error` as its ``error`` (unless it has one already: the
    /// first error wins). Observers hear of it in ``OpObserver/didCancel(_:error:)``.
    ///
    /// Like ``cancel()``, it does nothing to a finished operation.
    public final func cancel(with error: any Error) {
        transition { machine in
            let old = machine.error
            if machine.recordCancellationError(error) {
                machine.record(.error, old: old as Any, new: machine.error as Any)
            }
        }
        cancel()
    }

    /// Adds `operation`, made by this running operation, to this operation's queue (to its group,
    /// if it is a group's child), and tells the observers
    /// (``OpObserver/didProduce(_:operation:)``).
    ///
    /// - Important: Only a running operation in a queue (or a group) can produce: calling it
    ///   otherwise is a programmer error and traps, as is producing an operation that is in a queue
    ///   or a child of a group already. An ``AsyncOp`` that another thread finishes (a `didCancel`
    ///   observer that calls `finish()`, say) while its `execute()` still runs is not running from
    ///   then on: produce before its work can be finished.
    public final func produce(_ operation: Op) {
        let (isExecuting, queue, group) = withState { ($0.lifecycle == .executing, $0.queue, $0.group) }
        guard isExecuting else {
            misuse("produce(_:) was called on \(self), which is not executing. An operation produces others from its body, while it runs; add \(operation) to a queue instead.")
        }
        guard group != nil || queue != nil else {
            misuse("produce(_:) was called on \(self), which is in no queue (it was started by hand), so \(operation) has nowhere to go. Add \(operation) to a queue yourself.")
        }
        let observers = withState { $0.observers }
        // Before the add, and returned from: an observer may still change the operation.
        observers?.post(.willAdd(operation), from: self)
        if let group {
            group.addChild(operation)
        } else if let queue {
            queue.addOperation(operation)
        }
        observers?.post(.didAdd(operation), from: self)
        observers?.post(.didProduce(operation), from: self)
    }

    // MARK: Telling the observers

    /// Tells the observers that the body is about to run (they return before it does), if the
    /// operation is still executing (an observer of its start may have finished it already).
    ///
    /// - Returns: Whether the body is still to run: `false` if an ``AsyncOp`` was finished by then,
    ///   or is finishing (by a handler of its start, or of a cancellation made as it started, on
    ///   any thread): its work is over, and its observers hear no `willExecute` after `willFinish`.
    final func observersWillExecute() -> Bool {
        let (held, isExecuting): ((ObserverRegistry, ObserverRegistry.Pending)?, Bool) = withState { machine in
            guard machine.lifecycle == .executing else { return (nil, false) }
            guard let observers = machine.observers else { return (nil, true) }
            guard let pending = observers.queuingWillExecute(of: self) else { return (nil, false) }
            return ((observers, pending), true)
        }
        if let (observers, pending) = held {
            observers.deliverHeld(pending, of: self)
        }
        return isExecuting || !isAsynchronousStorage
    }

    /// Tells the observers that the body returned, for an ``AsyncOp`` whose synchronous
    /// `execute()` returned while it goes on executing (see ``OpObserver/didExecute(_:)``).
    ///
    /// Delivered from a job of the worker pool, not by the thread that ran the body: that thread
    /// still holds the operation's slot, and a callback delivered there (`didExecute`, or one
    /// queued before it) that waited for the operation would wait on the thread that runs it.
    final func observersDidExecute() {
        let (registry, qualityOfService): (ObserverRegistry?, DispatchQoS.QoSClass) = withState { machine in
            guard machine.lifecycle == .executing else { return (nil, .default) }
            return (machine.observers?.queuingDidExecute(), machine.qualityOfService)
        }
        guard let registry else { return }
        WorkerPool.shared.submit(qualityOfService: qualityOfService) { [self] in deliver(registry) }
    }

    /// Tells the observers that the work is over, before the operation reads as finished (they
    /// return before it does).
    final func observersWillFinish() {
        let held: (ObserverRegistry, ObserverRegistry.Pending)? = withState { machine in
            machine.endTimeout()   // the work is over: no timer touches the operation from now on
            guard machine.lifecycle == .executing, let observers = machine.observers else { return nil }
            return (observers, observers.queuingWillFinish(error: machine.error, of: self))
        }
        if let (observers, pending) = held {
            observers.deliverHeld(pending, of: self)
        }
    }
}
