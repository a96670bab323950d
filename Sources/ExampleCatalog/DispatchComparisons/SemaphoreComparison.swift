import Dispatch
import Operations

/// A `DispatchSemaphore` used as a width limit next to ``OpQueue/maxConcurrentOperationCount``:
/// start six requests whose answers come in callbacks, never more than two in flight.
///
/// With GCD the thread that starts the requests waits on the semaphore before each one and the
/// callbacks signal it, so that thread is blocked for as long as the backlog lasts (and the
/// variant that waits inside dispatched blocks parks a pool thread per waiting job). With
/// operations each request is an ``AsyncOp``, which holds a slot of the queue from its start
/// until its callback finishes it, so the queue's width is the limit: adding the requests can
/// return at once (the example waits only so that it can print the result), no thread waits for
/// a slot, and the requests can still be cancelled, prioritized or depended on. What GCD keeps: a semaphore is tiny and can guard anything, not only work put
/// in a queue.
///
/// Each side counts the requests in flight and keeps the most at once. A request's answer comes
/// only once that peak has reached the limit (a request started alone waits for the next one),
/// so the peak reaches the limit on every run, and the limit keeps it from going above.
enum SemaphoreComparison {
    /// The example: `swift run examples gcd-semaphore`.
    static let example = Example(
        name: "gcd-semaphore",
        title: "A semaphore as a width limit vs maxConcurrentOperationCount",
        source: "GCD: DispatchSemaphore",
        expected: [
            "GCD semaphore(2): 6 requests answered, at most 2 in flight at once",
            "OpQueue width 2: 6 requests answered, at most 2 in flight at once",
        ]
    ) { output in
        let limit = 2
        let callbacks = DispatchQueue(label: "gcd-semaphore.callbacks")

        // GCD: wait for a free slot before each request; the callback gives the slot back. A
        // group waits for the last answers.
        let semaphore = DispatchSemaphore(value: limit)
        let answered = DispatchGroup()
        let gcdRequests = Requests(limit: limit, callbackQueue: callbacks)
        for id in 1...6 {
            semaphore.wait()
            answered.enter()
            gcdRequests.start(id) {
                semaphore.signal()
                answered.leave()
            }
        }
        answered.wait()
        output.line("GCD semaphore(\(limit)): \(gcdRequests.answered) requests answered, at most \(gcdRequests.peak) in flight at once")

        // Operations: one callback-style AsyncOp (a `CallbackOp`) per request: `execute()`
        // starts the request and its callback finishes the operation. The queue's width does the
        // limiting.
        let queue = OpQueue()
        queue.name = "gcd-semaphore"
        queue.maxConcurrentOperationCount = limit
        let opRequests = Requests(limit: limit, callbackQueue: callbacks)
        let operations = (1...6).map { id in
            CallbackOp { finish in opRequests.start(id, completion: finish) }
        }
        queue.addOperations(operations, waitUntilFinished: true)
        output.line("OpQueue width \(limit): \(opRequests.answered) requests answered, at most \(opRequests.peak) in flight at once")
    }

    /// Simulated requests answered in callbacks on a serial queue, counting how many are in
    /// flight. Requests are held unanswered until the number in flight has once reached `limit`;
    /// from then on each is answered at once.
    final class Requests: Sendable {
        private struct State {
            var inFlight = 0
            var peak = 0
            var answered = 0
            var held: [@Sendable () -> Void] = []
        }

        private let limit: Int
        private let callbackQueue: DispatchQueue
        private let state = Locked(State())

        init(limit: Int, callbackQueue: DispatchQueue) {
            self.limit = limit
            self.callbackQueue = callbackQueue
        }

        /// Starts request `id`; `completion` is called on the callback queue once it is answered.
        func start(_ id: Int, completion: @escaping @Sendable () -> Void) {
            let answer: @Sendable () -> Void = { [self] in
                state.withLock { state in
                    state.inFlight -= 1
                    state.answered += 1
                }
                completion()
            }
            let due = state.withLock { state -> [@Sendable () -> Void] in
                state.inFlight += 1
                state.peak = max(state.peak, state.inFlight)
                state.held.append(answer)
                guard state.peak >= limit else { return [] }
                defer { state.held = [] }
                return state.held
            }
            for answer in due {
                callbackQueue.async(execute: answer)
            }
        }

        var peak: Int { state.withLock { $0.peak } }
        var answered: Int { state.withLock { $0.answered } }
    }
}
