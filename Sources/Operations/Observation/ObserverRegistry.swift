import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The observers of one object and the changes waiting to be delivered to them.
///
/// The object's storage records changes here while it holds its own state lock, so records are
/// queued in exactly the order the transitions happened. After releasing its lock, the thread
/// that made a change calls ``deliver(to:)``, which calls the handlers with no lock held.
///
/// Delivery is combining: at most one thread delivers an object's changes at a time, in order.
/// If another thread is already delivering (or the handler that is running makes a further change),
/// that thread delivers the new records too, right after the ones before them; the thread that made
/// the change does not wait for it. This keeps every change delivered once and in order without a
/// handler ever being able to deadlock the object.
final class ObserverRegistry: @unchecked Sendable {
    // @unchecked Sendable: `entries`, `outbox` and `isDelivering` are only touched with `lock`
    // held; `mask` is atomic. Records hold only Sendable values (see `Record`).

    /// One registered handler.
    final class Entry: Sendable {
        let property: Int
        let options: ObservingOptions
        let handler: @Sendable (AnyObject, Record, _ isPrior: Bool) -> Void
        let isActive = Atomic<Bool>(true)

        init(property: Int, options: ObservingOptions, handler: @escaping @Sendable (AnyObject, Record, Bool) -> Void) {
            self.property = property
            self.options = options
            self.handler = handler
        }
    }

    /// One change of one property.
    struct Record: @unchecked Sendable {
        // @unchecked Sendable: the storages only ever put Sendable values (Bool, Int, String?,
        // [Op], priorities, @Sendable closures) in `oldValue` and `newValue`.
        let property: Int
        let oldValue: Any
        let newValue: Any
        /// The record's place among every record of this registry (see ``recordCount``).
        let sequence: UInt64
    }

    private let lock = Lock()
    private var entries: [Entry] = []
    private var outbox = RingBuffer<Record>()
    private var isDelivering = false
    private var recorded: UInt64 = 0

    /// Bit `n` is set while property `n` has at least one observer. Read under the owner's state
    /// lock to decide whether a change must be recorded; acquiring so that a new observer's
    /// registration is seen together with its entry.
    private let mask = Atomic<UInt32>(0)

    /// Bit `n` is set while property `n` has an observer that asked for old or new values (see
    /// ``observesValues(_:)``); like `mask`.
    private let valuesMask = Atomic<UInt32>(0)

    init() {}

    /// Whether any observer watches `property`.
    @inline(__always)
    func observes(_ property: Int) -> Bool {
        mask.load(ordering: .acquiring) & (1 << UInt32(property)) != 0
    }

    /// Whether an observer of `property` asked for its old or new values (``ObservingOptions/old``,
    /// ``ObservingOptions/new``). A change of a property whose values are costly to copy (a list)
    /// is recorded with its values only then; otherwise with placeholders no handler reads.
    @inline(__always)
    func observesValues(_ property: Int) -> Bool {
        valuesMask.load(ordering: .acquiring) & (1 << UInt32(property)) != 0
    }

    /// Whether any observer watches any property.
    @inline(__always)
    var isEmpty: Bool { mask.load(ordering: .acquiring) == 0 }

    func add(_ entry: Entry) {
        lock.withLock {
            entries.append(entry)
            recomputeMask()
        }
    }

    func remove(_ entry: Entry) {
        entry.isActive.store(false, ordering: .releasing)
        let removed: Entry? = lock.withLock {
            guard let index = entries.firstIndex(where: { $0 === entry }) else { return nil }
            let removed = entries.remove(at: index)
            recomputeMask()
            return removed
        }
        withExtendedLifetime(removed) {}  // released outside the lock
    }

    private func recomputeMask() {
        var bits: UInt32 = 0
        var valueBits: UInt32 = 0
        for entry in entries {
            bits |= 1 << UInt32(entry.property)
            if entry.options.contains(.old) || entry.options.contains(.new) {
                valueBits |= 1 << UInt32(entry.property)
            }
        }
        valuesMask.store(valueBits, ordering: .releasing)
        mask.store(bits, ordering: .releasing)
    }

    /// Queues a change. Called with the owner's state lock held; takes only this registry's lock.
    func record(property: Int, oldValue: Any, newValue: Any) {
        guard observes(property) else { return }
        lock.withLock {
            outbox.append(Record(property: property, oldValue: oldValue, newValue: newValue, sequence: recorded))
            recorded += 1
        }
    }

    /// How many changes were recorded so far: the sequence number of the next one. Read with the
    /// owner's state lock held, it marks where the changes of the transition to come begin.
    var recordCount: UInt64 {
        lock.withLock { recorded }
    }

    /// Delivers queued changes to the handlers, in order. Called with no lock held.
    func deliver(to subject: AnyObject) {
        deliver(to: subject, heldFrom: nil, hold: nil)
    }

    /// Delivers the changes of a transition whose action (the body of an operation that starts,
    /// the rest of a finish) waits on this thread for their handlers, which run inside `hold`.
    /// The transition's changes begin with sequence number `firstChange`.
    ///
    /// Earlier changes still queued are not this thread's to deliver: whoever recorded them will
    /// deliver them (every thread that records a change delivers afterwards), and with them this
    /// transition's changes, on a thread that holds nothing up. So this returns at once, and the
    /// action goes ahead before its handlers run, as when another thread is delivering already.
    func deliver(to subject: AnyObject, heldFrom firstChange: UInt64, hold: @escaping (() -> Void) -> Void) {
        deliver(to: subject, heldFrom: Optional(firstChange), hold: hold)
    }

    private func deliver(to subject: AnyObject, heldFrom firstChange: UInt64?, hold: ((() -> Void) -> Void)?) {
        while true {
            let batch: (records: [Record], entries: [Entry])? = lock.withLock {
                if isDelivering || outbox.isEmpty { return nil }
                if let firstChange, let oldest = outbox.first, oldest.sequence < firstChange { return nil }
                isDelivering = true
                return (outbox.removeAll(), entries)
            }
            guard let batch else { return }
            for record in batch.records {
                let call = {
                    for entry in batch.entries where entry.property == record.property {
                        if entry.options.contains(.prior), entry.isActive.load(ordering: .acquiring) {
                            entry.handler(subject, record, true)
                        }
                        if entry.isActive.load(ordering: .acquiring) {
                            entry.handler(subject, record, false)
                        }
                    }
                }
                if let hold {
                    hold(call)
                } else {
                    call()
                }
            }
            lock.withLock { isDelivering = false }
        }
    }
}
