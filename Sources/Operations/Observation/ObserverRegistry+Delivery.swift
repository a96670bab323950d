import Dispatch

// Who delivers an object's events, and when: the rules of the "Delivery rules" section of the
// ObservingOperations article, as code.
//
// - One thread at a time delivers an object's events (the deliverer), one handler at a time, in
//   the order the events were queued, with no lock held. A thread that queued an event delivers
//   when no other thread does: it becomes the deliverer and delivers until nothing is left.
// - An event queued by another thread while one delivers is left to the deliverer; so is an event
//   queued from inside a handler of the same object, delivered once that handler returns.
// - Except `willExecute` and `willFinish`, which the operation waits for: their poster delivers
//   them itself (from inside a handler of the same object too: nested in that handler, after the
//   events queued before them), or waits while the deliverer delivers them. Their handlers hold
//   the operation up (see `WaitDeadlocks`), wherever they run.
// - The thread that starts or finishes an operation delivers the changes of that transition before
//   it moves the operation on, if no other thread delivers and no earlier event waits for its own
//   poster; otherwise it leaves them, and the operation goes on. Whatever it delivers there holds
//   the operation up.
// - A handler that blocks in one of the library's waits steps aside: the events after it, and the
//   rest of its own event, go on without it (delivered by the threads that queue events, or by a
//   poster that waits), and it counts as returned. Not a `willExecute` or `willFinish` handler:
//   its operation waits for it, so its object's events wait too.

extension ObserverRegistry {
    // MARK: Delivering

    /// Delivers the queued events, unless another thread delivers them, or this thread is inside a
    /// handler of the object (they are delivered once it returns). Call with no lock held, after
    /// queuing.
    func deliver(to subject: AnyObject) {
        let me = ThreadContext.identity
        guard lock.withLock({ acquire(me, from: nil) }) else { return }
        deliverAsDeliverer(to: subject, holding: nil, until: nil, me: me)
    }

    /// Delivers what ``queuing(_:)`` queued (see ``deliver(to:)``).
    func deliverQueued(from operation: Op) {
        deliver(to: operation)
    }

    /// Delivers the events from `firstSequence` on before this thread moves `operation` on (runs
    /// its body, finishes or completes it), with the handlers holding the operation up (see
    /// ``WaitDeadlocks``).
    ///
    /// Events queued before them are not this thread's to deliver: whoever queued them delivers
    /// them (every thread that queues an event delivers afterwards), and these with them, on a
    /// thread that holds nothing up. So this returns at once, and the operation goes on before its
    /// handlers run, as it does when another thread is delivering, or when this thread is inside a
    /// handler of the operation.
    func deliverHolding(_ operation: Op, from firstSequence: UInt64) {
        let me = ThreadContext.identity
        guard lock.withLock({ acquire(me, from: firstSequence) }) else { return }
        deliverAsDeliverer(to: operation, holding: operation, until: nil, me: me)
    }

    /// Queues an ``OpObserver`` event with no lock held and delivers it.
    ///
    /// A `willExecute` or `willFinish` is delivered before this returns (see
    /// ``deliverHeld(_:of:)``), unless `waits` is `false`: a `willFinish` that comes once the
    /// operation reads as finished. That one and `didFinish` are delivered as by
    /// ``deliverHolding(_:from:)``: the calling thread completes the operation afterwards. Any
    /// other event as by ``deliver(to:)``.
    func post(_ event: Event, from operation: Op, waits: Bool = true) {
        if waits && event.holdsOperation {
            deliverHeld(queuingHeld(event, of: operation), of: operation)
            return
        }
        let first = lock.withLock { append(event).sequence }
        switch event {
        case .willFinish, .didFinish:
            deliverHolding(operation, from: first)
        case .change, .initial, .didAttach, .willExecute, .didExecute, .didCancel, .didProduce, .willAdd, .didAdd:
            deliver(to: operation)
        }
    }

    /// Queues the `willExecute` of `operation`, unless its `willFinish` was queued already (its
    /// work is over before its body ran); called with the operation's lock held.
    func queuingWillExecute(of operation: Op) -> Pending? {
        lock.withLock { finishAnnounced ? nil : append(.willExecute, held: operation) }
    }

    /// Queues the `willFinish` of `operation`, which ran, preceded by its `didExecute` if that
    /// was not queued yet (its body returned as it finishes): to be delivered with
    /// ``deliverHeld(_:of:)``. Called with the operation's lock held.
    func queuingWillFinish(error: (any Error)?, of operation: Op) -> Pending {
        lock.withLock {
            if !executeAnnounced { append(.didExecute) }
            return append(.willFinish(error: error), held: operation)
        }
    }

    /// Queues `didExecute` unless it was queued already or the finish was announced (it came
    /// before `willFinish` then). Returns the registry to deliver from, if it queued. Called with
    /// the operation's lock held.
    func queuingDidExecute() -> ObserverRegistry? {
        lock.withLock {
            guard !executeAnnounced && !finishAnnounced else { return nil }
            append(.didExecute)
            return self
        }
    }

    /// Queues a `willExecute` or `willFinish` of `operation`, to be delivered with
    /// ``deliverHeld(_:of:)``. Called with the operation's lock held, so that it takes its place
    /// in the transitions' order (or with no lock held).
    func queuingHeld(_ event: Event, of operation: Op) -> Pending {
        lock.withLock { append(event, held: operation) }
    }

    /// Delivers `pending`, a `willExecute` or `willFinish` that this thread queued, before
    /// returning: as the deliverer if nobody delivers (the events before it too, holding the
    /// operation up); nested in the handler that this thread runs, if it is the deliverer; or by
    /// waiting while another thread delivers it (which holds the operation up meanwhile).
    func deliverHeld(_ pending: Pending, of operation: Op) {
        let me = ThreadContext.identity
        let role: DelivererRole = lock.withLock {
            if deliverer == nil {
                deliverer = me
                return .acquired
            }
            return deliverer == me ? .nested : .other
        }
        switch role {
        case .acquired:
            deliverAsDeliverer(to: operation, holding: operation, until: nil, me: me)
        case .nested:
            deliverAsDeliverer(to: operation, holding: operation, until: pending, me: me)
        case .other:
            break
        }
        awaitDelivery(of: pending, operation: operation, me: me)
    }

    /// How a poster stands to the deliverer.
    private enum DelivererRole {
        /// Nobody delivered: the poster does now.
        case acquired
        /// The poster delivers already: it is inside a handler of the object.
        case nested
        /// Another thread delivers.
        case other
    }

    /// Waits until `pending` was delivered; takes over the delivery if its deliverer stepped aside.
    private func awaitDelivery(of pending: Pending, operation: Op, me: UnsafeMutableRawPointer) {
        while true {
            enum Next { case done, deliver(nested: Bool), wait(DispatchSemaphore) }
            let next: Next = lock.withLock {
                if pending.isDone { return .done }
                if deliverer == nil {
                    deliverer = me
                    return .deliver(nested: false)
                }
                if deliverer == me { return .deliver(nested: true) }
                if pending.waiter == nil { pending.waiter = DispatchSemaphore(value: 0) }
                return .wait(pending.waiter!)
            }
            switch next {
            case .done:
                return
            case .deliver(let nested):
                deliverAsDeliverer(to: operation, holding: operation, until: nested ? pending : nil, me: me)
            case .wait(let semaphore):
                semaphore.wait()
            }
        }
    }

    // MARK: The deliverer

    /// Makes `me` the deliverer if nobody delivers and an event waits, from `firstSequence` on if
    /// given (an earlier event makes it refuse). Call with `lock` held.
    private func acquire(_ me: UnsafeMutableRawPointer, from firstSequence: UInt64?) -> Bool {
        guard deliverer == nil, let next = firstUnbegun() else { return false }
        if let firstSequence, next.sequence < firstSequence { return false }
        deliverer = me
        return true
    }

    /// Delivers as the deliverer: until nothing is left (then it stops being the deliverer), or
    /// with `target` (a nested delivery), until `target` was delivered (it stays the deliverer:
    /// the handler it runs in continues). With `operation`, the handlers hold it up.
    private func deliverAsDeliverer(to subject: AnyObject, holding operation: Op?, until target: Pending?,
                                    me: UnsafeMutableRawPointer) {
        if let operation {
            ThreadContext.withDelivery(of: operation) {
                deliverUnits(to: subject, until: target, me: me)
            }
        } else {
            deliverUnits(to: subject, until: target, me: me)
        }
    }

    private func deliverUnits(to subject: AnyObject, until target: Pending?, me: UnsafeMutableRawPointer) {
        while true {
            lock.lock()
            if deliverer != me {
                // This thread stepped aside while a handler of it waited: it delivers again only
                // if no other thread took over.
                guard deliverer == nil, firstUnbegun() != nil else {
                    lock.unlock()
                    return
                }
                deliverer = me
            }
            if let target, target.isDone {
                lock.unlock()
                return
            }
            guard let (pending, recipient) = beginNext(me) else {
                if target == nil { deliverer = nil }
                let done = popDone()
                lock.unlock()
                withExtendedLifetime(done) {}   // released outside the lock
                return
            }
            lock.unlock()
            call(recipient, of: pending, subject: subject)
            let done: [Pending] = lock.withLock {
                end(pending, me)
                return popDone()
            }
            withExtendedLifetime(done) {}
        }
    }

    /// The first event whose recipients were not all called, if any. Call with `lock` held.
    private func firstUnbegun() -> Pending? {
        for index in head..<events.count {
            if let pending = events[index], !pending.isBegun { return pending }
        }
        return nil
    }

    /// The next handler to call, marked as running on `me`. Call with `lock` held.
    private func beginNext(_ me: UnsafeMutableRawPointer) -> (Pending, Pending.Recipient)? {
        for index in head..<events.count {
            guard let pending = events[index] else { continue }
            if pending.recipients == nil {
                pending.recipients = recipients(of: pending)
            }
            let recipients = pending.recipients!
            if pending.next < recipients.count {
                let recipient = recipients[pending.next]
                pending.next += 1
                pending.running.append(me)
                return (pending, recipient)
            }
            if !pending.isDone && pending.running.isEmpty {
                // No recipient (or every handler stepped aside).
                finish(pending)
            }
        }
        return nil
    }

    /// Who hears of `pending`: the observers registered before it, still registered. Call with
    /// `lock` held.
    private func recipients(of pending: Pending) -> [Pending.Recipient] {
        switch pending.event {
        case .change(let record):
            var recipients: [Pending.Recipient] = []
            for registered in entries
            where registered.observer.property == record.property && registered.since <= pending.sequence {
                recipients.append(.entry(registered.observer))
            }
            return recipients
        case .initial(let entry):
            return [.entry(entry)]
        case .didAttach(let observer):
            return [.observer(observer)]
        case .willExecute, .didExecute, .didCancel, .willFinish, .didFinish, .didProduce, .willAdd, .didAdd:
            var recipients: [Pending.Recipient] = []
            for registered in observers where registered.since <= pending.sequence {
                recipients.append(.observer(registered.observer))
            }
            return recipients
        }
    }

    /// A handler of `pending` returned on `me` (unless it stepped aside). Call with `lock` held.
    private func end(_ pending: Pending, _ me: UnsafeMutableRawPointer) {
        if let index = pending.running.firstIndex(of: me) {
            pending.running.remove(at: index)
        }
        if pending.isBegun && pending.running.isEmpty && !pending.isDone {
            finish(pending)
        }
    }

    /// Marks `pending` delivered and wakes its poster. Call with `lock` held.
    private func finish(_ pending: Pending) {
        pending.isDone = true
        pending.waiter?.signal()
        if case .didFinish = pending.event {
            // Nothing more will be told: let the observers go (outside the lock, with the event).
            pending.released = observers
            observers = []
        }
    }

    /// Removes the delivered events from the front, returning them to be released after the lock.
    /// Call with `lock` held.
    private func popDone() -> [Pending] {
        var done: [Pending] = []
        while head < events.count {
            guard let pending = events[head] else {
                head += 1
                continue
            }
            guard pending.isDone else { break }
            done.append(pending)
            events[head] = nil
            head += 1
        }
        if head == events.count {
            events.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 32 && head * 2 >= events.count {
            events.removeFirst(head)   // only `nil`s: nothing is released here
            head = 0
        }
        return done
    }

    /// Calls one handler, with no lock held.
    private func call(_ recipient: Pending.Recipient, of pending: Pending, subject: AnyObject) {
        let context = ThreadContext.current
        context.pointee.handlers.append(Unmanaged.passUnretained(self))
        defer { ThreadContext.current.pointee.handlers.removeLast() }
        if let held = pending.held {
            // A `willExecute` or `willFinish` whose poster waits: its operation cannot move on
            // until the handler returns.
            ThreadContext.withDelivery(of: held.takeUnretainedValue()) {
                Self.invoke(recipient, with: pending.event, subject: subject)
            }
        } else {
            Self.invoke(recipient, with: pending.event, subject: subject)
        }
    }

    private static func invoke(_ recipient: Pending.Recipient, with event: Event, subject: AnyObject) {
        switch recipient {
        case .entry(let entry):
            switch event {
            case .change(let record):
                precondition(record.hasValues || !entry.wantsValues,
                             "Internal inconsistency: a change recorded without values reached an observation that asked for them")
                if entry.options.contains(.prior), entry.isActive.load(ordering: .acquiring) {
                    entry.handler(subject, record, true)
                }
                if entry.isActive.load(ordering: .acquiring) {
                    entry.handler(subject, record, false)
                }
            case .initial:
                if entry.isActive.load(ordering: .acquiring) {
                    entry.initial?(subject)
                }
            case .didAttach, .willExecute, .didExecute, .didCancel, .willFinish, .didFinish, .didProduce, .willAdd, .didAdd:
                preconditionFailure("Internal inconsistency: an OpObserver event \(event) reached a property observation")
            }
        case .observer(let observer):
            let operation = unsafeDowncast(subject, to: Op.self)
            switch event {
            case .didAttach: observer.didAttach(to: operation)
            case .willExecute: observer.willExecute(operation)
            case .didExecute: observer.didExecute(operation)
            case .didCancel(let error): observer.didCancel(operation, error: error)
            case .willFinish(let error): observer.willFinish(operation, error: error)
            case .didFinish(let error): observer.didFinish(operation, error: error)
            case .didProduce(let produced): observer.didProduce(operation, operation: produced)
            case .willAdd(let added): observer.willAdd(operation, operation: added)
            case .didAdd(let added): observer.didAdd(operation, operation: added)
            case .change, .initial:
                preconditionFailure("Internal inconsistency: a property change reached an OpObserver")
            }
        }
    }

    // MARK: Stepping aside

    /// The calling thread is about to block in one of the library's waits: every handler running
    /// on it steps aside (see the rules at the top of this file), so that the events of the
    /// objects it delivers go on without it, and a poster waiting for one of them is not held up
    /// by this wait. A `willExecute` or `willFinish` handler does not: its operation waits for it.
    static func stepAsideForBlockingWait() {
        let handlers = ThreadContext.current.pointee.handlers
        guard !handlers.isEmpty else { return }
        let me = ThreadContext.identity
        var seen: [ObjectIdentifier] = []
        for registry in handlers.reversed() {
            let registry = registry.takeUnretainedValue()   // kept alive by the frames that run its handlers
            guard !seen.contains(ObjectIdentifier(registry)) else { continue }
            seen.append(ObjectIdentifier(registry))
            registry.stepAside(me)
        }
    }

    private func stepAside(_ me: UnsafeMutableRawPointer) {
        let done: [Pending] = lock.withLock {
            var mine: [Pending] = []
            for index in head..<events.count {
                if let pending = events[index], pending.running.contains(me) { mine.append(pending) }
            }
            if mine.contains(where: { $0.held != nil }) { return [] }
            for pending in mine {
                pending.running.removeAll { $0 == me }
                if pending.isBegun && pending.running.isEmpty && !pending.isDone {
                    finish(pending)
                }
            }
            if deliverer == me {
                deliverer = nil
                // A poster waiting for its event takes over.
                for index in head..<events.count {
                    if let pending = events[index], !pending.isDone { pending.waiter?.signal() }
                }
            }
            return popDone()
        }
        withExtendedLifetime(done) {}
    }
}
