import Dispatch

/// The ``OpObserver``s of one operation, and the events waiting to be told to them: delivers the
/// events one at a time, in order, with no lock held while an observer runs.
///
/// Whoever posts an event while nobody delivers becomes the deliverer, and delivers until the
/// mailbox is empty. An event posted while another thread delivers is left to that thread; the
/// events that must come before the operation moves on (``Event/willExecute`` before the body,
/// ``Event/willFinish(error:)`` before the operation reads as finished) make their poster wait
/// until they were delivered.
final class ObserverMailbox: @unchecked Sendable {
    // @unchecked Sendable: every stored property is only touched with `lock` held.

    /// Something to tell the observers.
    enum Event {
        /// `observer` was added: only it is told.
        case didAttach(any OpObserver)
        /// ``OpObserver/willExecute(_:)``.
        case willExecute
        /// ``OpObserver/didCancel(_:error:)``.
        case didCancel(error: (any Error)?)
        /// ``OpObserver/willFinish(_:error:)``.
        case willFinish(error: (any Error)?)
        /// ``OpObserver/didFinish(_:error:)``.
        case didFinish(error: (any Error)?)
        /// ``OpObserver/didProduce(_:operation:)``.
        case didProduce(Op)

        /// Whether the operation waits for the event to be delivered before it moves on.
        var holdsOperation: Bool {
            switch self {
            case .willExecute, .willFinish: true
            case .didAttach, .didCancel, .didFinish, .didProduce: false
            }
        }
    }

    /// An event with the observers it goes to (those registered when it was posted) and, if its
    /// poster waits, what to signal once it was delivered.
    private struct Pending {
        let event: Event
        let observers: [any OpObserver]
        let delivered: DispatchSemaphore?
    }

    private let lock = Lock()
    private var observers: [any OpObserver] = []
    private var pending: [Pending] = []
    private var isDelivering = false
    /// Whether `didFinish` was posted: nothing more will be told, so observers are not kept (an
    /// observer that holds its operation would otherwise keep both alive).
    private var isOver = false

    /// Registers `observer` and tells it that it was attached, before anything else (both in one
    /// step: an event posted meanwhile by another thread comes after `didAttach`).
    func add(_ observer: any OpObserver, to operation: Op) {
        let delivers: Bool = lock.withLock {
            if !isOver { observers.append(observer) }
            append(.didAttach(observer), delivered: nil)
            return becomeDeliverer()
        }
        if delivers { deliverAll(from: operation) }
    }

    /// Tells the observers about `event` of `operation`: now, on this thread, or through the
    /// thread that is delivering (waiting for it if the event holds the operation and `waits`).
    func post(_ event: Event, from operation: Op, waits: Bool = true) {
        var delivered: DispatchSemaphore?
        let delivers: Bool = lock.withLock {
            if isDelivering && event.holdsOperation && waits {
                delivered = DispatchSemaphore(value: 0)
            }
            append(event, delivered: delivered)
            return becomeDeliverer()
        }
        guard delivers else {
            delivered?.wait()
            return
        }
        deliverAll(from: operation)
    }

    /// Queues `event` without delivering it, and returns the mailbox for its caller to deliver
    /// with ``deliverQueued(from:)`` once the operation's lock is released: its place in the order
    /// is taken now (called with that lock held, inside the transition that makes it happen).
    func queuing(_ event: Event) -> ObserverMailbox {
        lock.withLock { append(event, delivered: nil) }
        return self
    }

    /// Delivers the queued events, unless another thread is delivering (it delivers them).
    func deliverQueued(from operation: Op) {
        if lock.withLock({ !pending.isEmpty && becomeDeliverer() }) {
            deliverAll(from: operation)
        }
    }

    /// Makes the calling thread the deliverer unless another thread is; call with the lock held.
    private func becomeDeliverer() -> Bool {
        if isDelivering { return false }
        isDelivering = true
        return true
    }

    private func append(_ event: Event, delivered: DispatchSemaphore?) {
        let recipients: [any OpObserver]
        if case .didAttach(let observer) = event { recipients = [observer] } else { recipients = observers }
        pending.append(Pending(event: event, observers: recipients, delivered: delivered))
        if case .didFinish = event {
            // The last event: the observers are released once it has been delivered.
            isOver = true
            observers = []
        }
    }

    /// Delivers until nothing is pending; the caller became the deliverer.
    private func deliverAll(from operation: Op) {
        while let next = lock.withLock({ () -> Pending? in
            if pending.isEmpty {
                isDelivering = false
                return nil
            }
            return pending.removeFirst()
        }) {
            deliver(next, from: operation)
            next.delivered?.signal()
        }
    }

    private func deliver(_ pending: Pending, from operation: Op) {
        let event = pending.event
        // While `willExecute` or `willFinish` observers run, the operation cannot move on: the
        // wait-deadlock checks know it from the thread's context.
        if event.holdsOperation {
            ThreadContext.withDelivery(of: operation) { Self.call(pending.observers, with: event, of: operation) }
        } else {
            Self.call(pending.observers, with: event, of: operation)
        }
    }

    private static func call(_ observers: [any OpObserver], with event: Event, of operation: Op) {
        for observer in observers {
            switch event {
            case .didAttach: observer.didAttach(to: operation)
            case .willExecute: observer.willExecute(operation)
            case .didCancel(let error): observer.didCancel(operation, error: error)
            case .willFinish(let error): observer.willFinish(operation, error: error)
            case .didFinish(let error): observer.didFinish(operation, error: error)
            case .didProduce(let produced): observer.didProduce(operation, operation: produced)
            }
        }
    }
}
