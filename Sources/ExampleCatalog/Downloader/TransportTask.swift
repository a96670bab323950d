import Dispatch

/// One transfer of the ``SimulatedTransport``, the stand-in for a `URLSessionDataTask`: created
/// suspended, started with ``resume()``, stopped with ``cancel()``.
///
/// It plays a script of steps (a response, chunks, an ending) on the transport's serial callback
/// queue, one step every ``SimulatedTransport/chunkInterval``. A script without an ending is a
/// stalled connection: after its last chunk the task goes silent until it is cancelled. Whatever
/// happens, the delegate hears exactly one completion, after every other call.
final class TransportTask: Sendable {
    /// One step of the script.
    enum Step: Sendable {
        /// The response, announcing the length of the resource.
        case response(expectedLength: Int)
        /// A piece of the resource.
        case chunk([UInt8])
        /// The end of the transfer: complete (`nil`) or failed.
        case end(TransportError?)
    }

    private enum Phase {
        case suspended
        case running
        case over
    }

    private struct State {
        var phase = Phase.suspended
        /// Held until the completion is delivered, as a session holds its delegate.
        var delegate: (any TransportDelegate)?
    }

    /// The name of the resource the task transfers.
    let resourceName: String
    private let steps: [Step]
    private let transport: SimulatedTransport
    private let state: Locked<State>

    init(resourceName: String, steps: [Step], transport: SimulatedTransport, delegate: any TransportDelegate) {
        self.resourceName = resourceName
        self.steps = steps
        self.transport = transport
        self.state = Locked(State(delegate: delegate))
    }

    /// Starts the transfer; does nothing if it started or ended already.
    func resume() {
        let starts = state.withLock { state in
            guard state.phase == .suspended else { return false }
            state.phase = .running
            return true
        }
        guard starts else { return }
        transport.taskDidStart()
        schedule(step: 0)
    }

    /// Stops the transfer: the delegate hears no more data, and then a completion with
    /// ``TransportError/cancelled``. Does nothing once the transfer is over.
    func cancel() {
        let (delegate, wasRunning) = state.withLock { state -> ((any TransportDelegate)?, Bool) in
            guard state.phase != .over else { return (nil, false) }
            let wasRunning = state.phase == .running
            state.phase = .over
            defer { state.delegate = nil }
            return (state.delegate, wasRunning)
        }
        guard let delegate else { return }
        transport.callbackQueue.async {
            if wasRunning { self.transport.taskDidEnd() }
            delegate.transportTask(self, didCompleteWithError: .cancelled)
        }
    }

    private func schedule(step index: Int) {
        // A script that ends without an `.end` step has stalled: nothing more comes.
        guard steps.indices.contains(index) else { return }
        transport.callbackQueue.asyncAfter(deadline: .now() + transport.chunkInterval) {
            self.perform(step: index)
        }
    }

    /// Delivers one step, on the callback queue, unless the task was cancelled meanwhile.
    private func perform(step index: Int) {
        let step = steps[index]
        let delegate = state.withLock { state -> (any TransportDelegate)? in
            guard state.phase == .running else { return nil }
            guard case .end = step else { return state.delegate }
            state.phase = .over
            defer { state.delegate = nil }
            return state.delegate
        }
        guard let delegate else { return }
        switch step {
        case .response(let length):
            delegate.transportTask(self, didReceiveResponseWithExpectedLength: length)
        case .chunk(let bytes):
            delegate.transportTask(self, didReceive: bytes)
        case .end(let error):
            transport.taskDidEnd()
            delegate.transportTask(self, didCompleteWithError: error)
            return
        }
        schedule(step: index + 1)
    }
}
