/// What a ``TransportTask`` reports to, in the manner of `NSURLSessionDataDelegate`: the
/// response, each chunk of data, then one completion. The calls come one at a time, on the
/// transport's callback queue, and the completion is always the last.
protocol TransportDelegate: AnyObject, Sendable {
    /// The transfer began; `length` bytes are expected.
    func transportTask(_ task: TransportTask, didReceiveResponseWithExpectedLength length: Int)

    /// The next piece of the resource arrived.
    func transportTask(_ task: TransportTask, didReceive chunk: [UInt8])

    /// The transfer is over: complete if `error` is `nil`, stopped otherwise (``TransportError/cancelled``
    /// once the task was cancelled). Called exactly once per task that was resumed or cancelled.
    func transportTask(_ task: TransportTask, didCompleteWithError error: TransportError?)
}
