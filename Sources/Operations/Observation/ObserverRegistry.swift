import Dispatch
import Synchronization

/// The observers of one object (an operation or a queue), of both kinds, and the events waiting
/// to be delivered to them: the one path by which the library calls observer code.
///
/// Property observations (``KeyPathObservable/observe(_:options:changeHandler:)``, ``Op/changes``,
/// ``OpQueue/events(bufferingPolicy:)``) and ``OpObserver``s share one ordered outbox per object.
/// The object's storage queues an event while it holds its own state lock, inside the transition
/// that causes it, so events are queued in exactly the order the transitions happened; every
/// event has a sequence number, and an observer hears only of events queued after it registered
/// (registration happens under the same lock). After releasing its lock, the thread that made the
/// change delivers (see `ObserverRegistry+Delivery.swift` for who delivers when, and the rules
/// written for users in the "Delivery rules" section of the ObservingOperations article).
final class ObserverRegistry: @unchecked Sendable {
    // @unchecked Sendable: every stored `var` is only touched with `lock` held; `mask` and
    // `valuesMask` are atomic. Events hold only Sendable values (see `Record`) or values that the
    // library passes to observers (errors, operations), and are only touched with `lock` held.

    /// One property observation.
    final class Entry: Sendable {
        let property: Int
        let options: ObservingOptions
        let handler: @Sendable (AnyObject, Record, _ isPrior: Bool) -> Void
        /// Calls the handler with the property's current value, for ``ObservingOptions/initial``.
        let initial: (@Sendable (AnyObject) -> Void)?
        let isActive = Atomic<Bool>(true)

        init(property: Int, options: ObservingOptions,
             initial: (@Sendable (AnyObject) -> Void)? = nil,
             handler: @escaping @Sendable (AnyObject, Record, Bool) -> Void) {
            self.property = property
            self.options = options
            self.initial = initial
            self.handler = handler
        }

        /// Whether the observation asked for old or new values.
        var wantsValues: Bool { options.contains(.old) || options.contains(.new) }
    }

    /// One change of one property.
    struct Record: @unchecked Sendable {
        // @unchecked Sendable: the storages only ever put Sendable values (Bool, Int, String?,
        // [Op], priorities, errors, @Sendable closures) in `oldValue` and `newValue`.
        let property: Int
        let oldValue: Any
        let newValue: Any
        /// Whether `oldValue` and `newValue` are the property's values; `false` for a change of a
        /// list recorded while no observer of it asked for values (placeholders nobody reads).
        let hasValues: Bool
    }

    /// An observer and the sequence number of the first event it hears of.
    struct Registered<Observer> {
        let observer: Observer
        let since: UInt64
    }

    let lock = Lock()
    /// The property observations.
    var entries: [Registered<Entry>] = []
    /// The ``OpObserver``s (of an operation).
    var observers: [Registered<any OpObserver>] = []
    /// Whether `didFinish` was queued: no ``OpObserver`` is kept from then on, and those kept are
    /// let go once it was delivered (an observer that holds its operation would otherwise keep both
    /// alive).
    var observersAreOver = false
    /// Whether `willFinish` was queued: the work is over, and a `willExecute` is no longer queued
    /// (an ``AsyncOp`` finished by a handler of its start, on another thread, before its body ran).
    var finishAnnounced = false
    /// Whether `didExecute` was queued (it is queued once, at the latest right before `willFinish`).
    var executeAnnounced = false
    /// The events not yet delivered (or being delivered), oldest first, from `head` on.
    var events: [Pending?] = []
    var head = 0
    /// The sequence number of the next event.
    var sequence: UInt64 = 0
    /// The thread that delivers (``ThreadContext/identity``), if any.
    var deliverer: UnsafeMutableRawPointer?

    /// Bit `n` is set while property `n` has at least one observation. Read under the owner's state
    /// lock to decide whether a change must be recorded.
    private let mask = Atomic<UInt32>(0)

    /// Bit `n` is set while property `n` has an observation that asked for old or new values (see
    /// ``observesValues(_:)``); like `mask`.
    private let valuesMask = Atomic<UInt32>(0)

    init() {}

    // MARK: Registration

    /// Whether any observation watches `property`.
    @inline(__always)
    func observes(_ property: Int) -> Bool {
        mask.load(ordering: .acquiring) & (1 << UInt32(property)) != 0
    }

    /// Whether an observation of `property` asked for its old or new values
    /// (``ObservingOptions/old``, ``ObservingOptions/new``). A change of a property whose values
    /// are costly to copy (a list) is recorded with its values only then; otherwise with
    /// placeholders, which no observation registered before the change reads, and no observation
    /// registered after it receives.
    @inline(__always)
    func observesValues(_ property: Int) -> Bool {
        valuesMask.load(ordering: .acquiring) & (1 << UInt32(property)) != 0
    }

    /// Whether any observation watches any property.
    @inline(__always)
    var isEmpty: Bool { mask.load(ordering: .acquiring) == 0 }

    /// Registers a property observation; it hears of the changes queued from now on, after its
    /// initial call if it asked for one (``ObservingOptions/initial``).
    ///
    /// Call it with the owner's state lock held, so that no transition is between deciding how to
    /// record a change (with values or without) and queuing it; then ``deliver(to:)``.
    func add(_ entry: Entry) {
        lock.withLock {
            entries.append(Registered(observer: entry, since: sequence))
            recomputeMask()
            if entry.initial != nil {
                append(.initial(entry))
            }
        }
    }

    /// Registers an ``OpObserver``, which hears of the events queued from now on, beginning with
    /// ``OpObserver/didAttach(to:)`` (only it is told); with `keeps` `false` (the operation reads
    /// as finished), it is only told that. Call it with the operation's state lock held, then
    /// ``deliver(to:)``.
    func add(_ observer: any OpObserver, keeps: Bool = true) {
        lock.withLock {
            if keeps && !observersAreOver {
                observers.append(Registered(observer: observer, since: sequence))
            }
            append(.didAttach(observer))
        }
    }

    /// Ends a property observation.
    func remove(_ entry: Entry) {
        entry.isActive.store(false, ordering: .releasing)
        let removed: Registered<Entry>? = lock.withLock {
            guard let index = entries.firstIndex(where: { $0.observer === entry }) else { return nil }
            let removed = entries.remove(at: index)
            recomputeMask()
            return removed
        }
        withExtendedLifetime(removed) {}  // released outside the lock
    }

    private func recomputeMask() {
        var bits: UInt32 = 0
        var valueBits: UInt32 = 0
        for registered in entries {
            bits |= 1 << UInt32(registered.observer.property)
            if registered.observer.wantsValues {
                valueBits |= 1 << UInt32(registered.observer.property)
            }
        }
        valuesMask.store(valueBits, ordering: .releasing)
        mask.store(bits, ordering: .releasing)
    }

    // MARK: Queuing

    /// Queues a change of `property`, if it is observed. Called with the owner's state lock held;
    /// takes only this registry's lock.
    ///
    /// Generic and inlined, so that a change nobody observes costs one load: the values are boxed
    /// as `Any` only past the check (taken as `Any`, every caller boxed them first, and destroyed
    /// the boxes after).
    @inline(__always)
    func record<Old, New>(property: Int, oldValue: Old, newValue: New, hasValues: Bool = true) {
        guard observes(property) else { return }
        queue(Record(property: property, oldValue: oldValue, newValue: newValue, hasValues: hasValues))
    }

    /// Queues `record`, an observed change.
    private func queue(_ record: Record) {
        lock.withLock { _ = append(.change(record)) }
    }

    /// Queues `event` for the ``OpObserver``s, taking its place among the changes now (called with
    /// the operation's lock held, inside the transition that makes it happen), and returns the
    /// registry, whose caller delivers once the lock is released (``deliverQueued(from:)``).
    func queuing(_ event: Event) -> ObserverRegistry {
        lock.withLock { _ = append(event) }
        return self
    }

    /// The sequence number of the next event. Read with the owner's state lock held, it marks
    /// where the events of the transition to come begin.
    var nextSequence: UInt64 {
        lock.withLock { sequence }
    }

    /// Appends an event; call with `lock` held.
    @discardableResult
    func append(_ event: Event, held: Op? = nil) -> Pending {
        let pending = Pending(event: event, sequence: sequence, held: held)
        sequence += 1
        switch event {
        case .didFinish:
            // The last event for the observers: none is kept from now on.
            observersAreOver = true
        case .willFinish:
            finishAnnounced = true
        case .didExecute:
            executeAnnounced = true
        case .change, .initial, .didAttach, .willExecute, .didCancel, .didProduce, .willAdd, .didAdd:
            break
        }
        events.append(pending)
        return pending
    }
}
