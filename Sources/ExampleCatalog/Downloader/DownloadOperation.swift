import Operations

/// Downloads one resource through a ``SimulatedTransport``, in the manner of SDWebImage's
/// `SDWebImageDownloaderOperation` and AFNetworking's `AFURLConnectionOperation`: an asynchronous
/// operation driven by the transport's callbacks.
///
/// Where those classes override `start`, `isExecuting`, `isFinished` and `isConcurrent` and post
/// KVO notifications by hand, this one subclasses ``AsyncOp``: ``execute()`` starts the
/// transport's task and returns, and the task's completion callback calls ``AsyncOp/finish()``
/// exactly once. The operation holds its queue slot until then, so the queue's width limits how
/// many transfers are in flight, while no thread waits for any of them.
///
/// - **Cancellation:** ``cancel()`` also cancels the transport's task, whose completion (with
///   ``TransportError/cancelled``) then finishes the operation. Chunks that arrive once the
///   operation is cancelled are dropped.
/// - **Timeout:** the operation's ``Op/timeout`` (15 seconds unless told otherwise, as
///   SDWebImage's downloader) cancels it with an ``OpTimeoutError``, which goes through the same
///   ``cancel()``, so a stalled transfer is stopped the same way.
/// - **Failure:** a transport error finishes the operation with that error in ``Op/error``.
final class DownloadOperation: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: `AsyncOp` is an open class marked `@unchecked Sendable`; what this
    // subclass adds is immutable or kept in `state`, a mutex.

    /// Called on the transport's callback queue after each chunk, with the bytes received so far
    /// and the bytes expected.
    typealias ProgressHandler = @Sendable (_ operation: DownloadOperation, _ received: Int, _ expected: Int) -> Void

    private struct State {
        var task: TransportTask?
        var expectedLength = 0
        var data: [UInt8] = []
    }

    /// The name of the resource to download.
    let resourceName: String
    private let transport: SimulatedTransport
    private let progressHandler: ProgressHandler?
    private let state = Locked(State())

    /// An operation that downloads `resourceName` from `transport`, giving up after `timeout`.
    init(
        resourceName: String, transport: SimulatedTransport, timeout: Duration = .seconds(15),
        progress: ProgressHandler? = nil
    ) {
        self.resourceName = resourceName
        self.transport = transport
        self.progressHandler = progress
        super.init()
        name = resourceName
        self.timeout = timeout
    }

    /// The bytes received (all of them once the operation finished without an error).
    var data: [UInt8] {
        state.withLock { $0.data }
    }

    /// The length the transport announced, or 0 before its response.
    var expectedLength: Int {
        state.withLock { $0.expectedLength }
    }

    /// Starts the transfer and returns; the completion callback finishes the operation.
    override func execute() {
        guard !isCancelled else {
            finish()
            return
        }
        let task = transport.dataTask(named: resourceName, delegate: self)
        state.withLock { $0.task = task }
        task.resume()
        // Cancelled between the check above and storing the task: `cancel()` found no task to stop.
        if isCancelled {
            task.cancel()
        }
    }

    /// Cancels the operation and stops its transfer; the transfer's completion finishes it.
    override func cancel() {
        super.cancel()
        state.withLock { $0.task }?.cancel()
    }
}

extension DownloadOperation: TransportDelegate {
    func transportTask(_ task: TransportTask, didReceiveResponseWithExpectedLength length: Int) {
        state.withLock { $0.expectedLength = length }
    }

    func transportTask(_ task: TransportTask, didReceive chunk: [UInt8]) {
        guard !isCancelled else { return }
        let (received, expected) = state.withLock { state in
            state.data += chunk
            return (state.data.count, state.expectedLength)
        }
        progressHandler?(self, received, expected)
    }

    func transportTask(_ task: TransportTask, didCompleteWithError error: TransportError?) {
        state.withLock { $0.task = nil }
        switch error {
        case nil, .cancelled?:
            // On cancellation, `isCancelled` (and, after a timeout, `error`) already say why.
            finish()
        case let error?:
            finish(throwing: error)
        }
    }
}
