extension OpQueue: KeyPathObservable {}

extension KeyPathObservable where Self: OpQueue {
    /// Observes a property of the queue, like Foundation's KVO `observe(_:options:changeHandler:)`.
    ///
    /// Observable properties are those Foundation documents as KVO-compliant:
    /// ``OpQueue/operations``, ``OpQueue/operationCount``, ``OpQueue/maxConcurrentOperationCount``,
    /// ``OpQueue/isSuspended`` and ``OpQueue/name``.
    ///
    /// ```swift
    /// let token = queue.observe(\.operationCount, options: [.new]) { queue, change in
    ///     print("\(queue): \(change.newValue!) operations left")
    /// }
    /// ```
    ///
    /// Delivery follows the "Delivery rules" of <doc:ObservingOperations#Delivery-rules>:
    /// synchronously on the thread that made the change, outside every lock, each change made
    /// after the observation was registered once and in order.
    ///
    /// - Parameters:
    ///   - keyPath: The property to observe.
    ///   - options: Which values the change carries, and whether to get an initial call.
    ///   - changeHandler: Called with the queue and the change.
    /// - Returns: A token; the observation lasts until it is invalidated or released.
    public func observe<Value>(
        _ keyPath: KeyPath<Self, Value>,
        options: ObservingOptions = [],
        changeHandler: @escaping @Sendable (Self, ObservedChange<Value>) -> Void
    ) -> ObservationToken {
        let erased: AnyKeyPath = keyPath
        let table: [(AnyKeyPath, QueueProperty)] = [
            (\Self.operations, .operations),
            (\Self.operationCount, .operationCount),
            (\Self.maxConcurrentOperationCount, .maxConcurrentOperationCount),
            (\Self.isSuspended, .isSuspended),
            (\Self.name, .name),
        ]
        guard let property = table.first(where: { $0.0 == erased })?.1 else {
            misuse("\(keyPath) is not observable on \(self). Observable properties: operations, operationCount, maxConcurrentOperationCount, isSuspended, name.")
        }
        var initial: (@Sendable (AnyObject) -> Void)?
        if options.contains(.initial) {
            let wantsValue = options.contains(.new)
            // A key path is an immutable object: reading through it from the delivering thread is
            // safe, though `KeyPath` is not declared Sendable.
            nonisolated(unsafe) let keyPath = keyPath
            initial = { subject in
                let queue = unsafeDowncast(subject, to: Self.self)
                let value: Value? = wantsValue ? queue[keyPath: keyPath] : nil
                changeHandler(queue, ObservedChange(oldValue: nil, newValue: value))
            }
        }
        let entry = ObserverRegistry.Entry(property: property.rawValue, options: options, initial: initial) { subject, record, isPrior in
            changeHandler(unsafeDowncast(subject, to: Self.self), ObservedChange(record: record, options: options, isPrior: isPrior))
        }
        register(entry)
        if options.contains(.initial) {
            registry.deliver(to: self)
        }
        return ObservationToken(registry: registry, entry: entry)
    }
}

// MARK: - Observation storage

extension OpQueue {
    /// Registers an observation under the queue's lock, which every change of the queue holds as
    /// it is recorded: the observation hears of exactly the changes recorded from now on.
    final func register(_ entry: ObserverRegistry.Entry) {
        withLock { registry.add(entry) }
    }

    /// Reports that the queue started `operation` to ``events(bufferingPolicy:)`` subscribers.
    @inline(__always)
    final func noteStarted(_ operation: Op) {
        if registry.observes(QueueProperty.startedOperation.rawValue) { reportStarted(operation) }
    }

    /// ``noteStarted(_:)`` for a queue whose starts are observed.
    private final func reportStarted(_ operation: Op) {
        registry.record(property: QueueProperty.startedOperation.rawValue, oldValue: (), newValue: operation)
        registry.deliver(to: self)
    }

    /// A snapshot of the members if an observer of `operations` asked for its values (copying
    /// the members on every change otherwise would make filling a queue quadratic). Call with the
    /// lock held.
    final func observedOperations() -> [Op]? {
        guard registry.observesValues(QueueProperty.operations.rawValue) else { return nil }
        return machine.members.elements
    }

    /// Records changes of `operationCount` and `operations`. Call with the lock held.
    @inline(__always)
    final func recordMembershipChange(countBefore: Int, operationsBefore: [Op]?) -> QueueChanges {
        guard !registry.isEmpty else { return QueueChanges() }
        return recordObservedMembershipChange(countBefore: countBefore, operationsBefore: operationsBefore)
    }

    /// ``recordMembershipChange(countBefore:operationsBefore:)`` for a queue with observers.
    private final func recordObservedMembershipChange(countBefore: Int, operationsBefore: [Op]?) -> QueueChanges {
        let countAfter = machine.operationCount
        guard countAfter != countBefore else { return QueueChanges() }
        if let operationsBefore {
            registry.record(property: QueueProperty.operations.rawValue,
                            oldValue: operationsBefore, newValue: machine.members.elements)
        } else {
            // Observers that asked for no values: the change without them.
            registry.record(property: QueueProperty.operations.rawValue, oldValue: (), newValue: (), hasValues: false)
        }
        registry.record(property: QueueProperty.operationCount.rawValue, oldValue: countBefore, newValue: countAfter)
        return QueueChanges(recorded: true)
    }

    /// Runs a settings change under the lock, records it, starts a drainer if it asks for one,
    /// and delivers the change.
    final func updateSetting<Value>(
        _ property: QueueProperty,
        _ body: (inout OpQueueStateMachine) -> (requestDrainer: Bool, old: Value, new: Value)
    ) {
        let (request, observers, stallCheck): (Bool, ObserverRegistry, UInt64?) = withLock {
            let (request, old, new) = body(&machine)
            registry.record(property: property.rawValue, oldValue: old, newValue: new)
            return (request, registry, machine.stallCheckIfNeeded())
        }
        if let stallCheck { scheduleStallCheck(generation: stallCheck) }
        if request { startDrainer() }
        observers.deliver(to: self)
    }

    final func registryDeliver() {
        registry.deliver(to: self)
    }
}
