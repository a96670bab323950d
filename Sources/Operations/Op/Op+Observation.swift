/// Types whose properties can be observed with a key path, in the shape of Swift's KVO API.
///
/// ``Op`` and ``OpQueue`` conform; Linux has no Key-Value Observing, so the library provides
/// the observation itself.
///
/// ## Delivery
///
/// Handlers follow the "Delivery rules" of <doc:ObservingOperations#Delivery-rules>, which
/// ``OpObserver``s follow too (they share one ordered outbox per object). In short:
///
/// - A handler is called after the change, with no lock of the library held (a handler may read
///   or change the object freely, add observations, and wait), usually on the thread that made
///   the change before the call that made it returns: after `a.start()` returns, an observer of
///   a dependent's `isReady` has seen `true`.
/// - Every change is delivered once, in the order the changes happened, to the observations
///   registered before it (an observation never hears of an earlier change).
/// - Exceptions keep that order and avoid deadlocks: when another thread is already delivering
///   changes of the same object, that thread delivers the new change too, right after the earlier
///   ones, and the call that made it may return first; a change made from inside a handler is
///   delivered after that handler returns.
/// - A handler that waits with the library's waits steps aside while it waits; a wait that could
///   never return traps with an explanation.
public protocol KeyPathObservable: AnyObject {}

extension Op: KeyPathObservable {}

extension KeyPathObservable where Self: Op {
    /// Observes a property of the operation, like Foundation's KVO `observe(_:options:changeHandler:)`.
    ///
    /// Observable properties are those Foundation documents as KVO-compliant: ``Op/isCancelled``,
    /// ``Op/isAsynchronous``, ``Op/isExecuting``, ``Op/isFinished``, ``Op/isReady``,
    /// ``Op/dependencies``, ``Op/queuePriority`` and ``Op/completionBlock``; and ``Op/error``.
    ///
    /// ```swift
    /// let token = op.observe(\.isFinished, options: [.old, .new]) { op, change in
    ///     print(op, change.oldValue!, "→", change.newValue!)
    /// }
    /// ```
    ///
    /// Delivery follows the "Delivery rules" of <doc:ObservingOperations#Delivery-rules>:
    /// synchronously on the thread that made the change, outside every lock, each change made
    /// after the observation was registered once and in order, in one outbox with the operation's
    /// ``OpObserver``s.
    ///
    /// - Parameters:
    ///   - keyPath: The property to observe.
    ///   - options: Which values the change carries, and whether to get an initial call.
    ///   - changeHandler: Called with the operation and the change.
    /// - Returns: A token; the observation lasts until it is invalidated or released.
    public func observe<Value>(
        _ keyPath: KeyPath<Self, Value>,
        options: ObservingOptions = [],
        changeHandler: @escaping @Sendable (Self, ObservedChange<Value>) -> Void
    ) -> ObservationToken {
        let erased: AnyKeyPath = keyPath
        let table: [(AnyKeyPath, OpProperty)] = [
            (\Self.isCancelled, .isCancelled),
            (\Self.isAsynchronous, .isAsynchronous),
            (\Self.isExecuting, .isExecuting),
            (\Self.isFinished, .isFinished),
            (\Self.isReady, .isReady),
            (\Self.dependencies, .dependencies),
            (\Self.queuePriority, .queuePriority),
            (\Self.completionBlock, .completionBlock),
            (\Self.error, .error),
        ]
        guard let property = table.first(where: { $0.0 == erased })?.1 else {
            misuse("\(keyPath) is not observable on \(self). Observable properties: isCancelled, isAsynchronous, isExecuting, isFinished, isReady, dependencies, queuePriority, completionBlock, error.")
        }
        var initial: (@Sendable (AnyObject) -> Void)?
        if options.contains(.initial) {
            let wantsValue = options.contains(.new)
            // A key path is an immutable object: reading through it from the delivering thread is
            // safe, though `KeyPath` is not declared Sendable.
            nonisolated(unsafe) let keyPath = keyPath
            initial = { subject in
                let operation = unsafeDowncast(subject, to: Self.self)
                let value: Value? = wantsValue ? operation[keyPath: keyPath] : nil
                changeHandler(operation, ObservedChange(oldValue: nil, newValue: value))
            }
        }
        let entry = ObserverRegistry.Entry(property: property.rawValue, options: options, initial: initial) { subject, record, isPrior in
            changeHandler(unsafeDowncast(subject, to: Self.self), ObservedChange(record: record, options: options, isPrior: isPrior))
        }
        // Registered under the operation's lock, which every transition holds as it records a
        // change: the observation hears of exactly the changes recorded from now on.
        let registry = withState { machine in
            let registry = machine.ensureRegistry()
            registry.add(entry)
            return registry
        }
        if options.contains(.initial) {
            registry.deliver(to: self)
        }
        return ObservationToken(registry: registry, entry: entry)
    }
}

extension ObservedChange {
    /// Builds the change a handler receives from a queued record (one with values, if the
    /// observation asked for them: see ``ObserverRegistry/Record/hasValues``).
    init(record: ObserverRegistry.Record, options: ObservingOptions, isPrior: Bool) {
        self.init(
            oldValue: options.contains(.old) ? (record.oldValue as! Value) : nil,
            newValue: options.contains(.new) && !isPrior ? (record.newValue as! Value) : nil,
            isPrior: isPrior
        )
    }
}
