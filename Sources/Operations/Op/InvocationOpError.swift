/// Why ``InvocationOp/result`` has no value.
public enum InvocationOpError: Error, CustomStringConvertible {
    /// The operation was cancelled, so its result is not to be used.
    case cancelled
    /// The operation has not finished yet; wait for it (``Op/waitUntilFinished()-2def2``) first.
    case notFinished
    /// The method threw this error.
    case failed(any Error)

    /// A sentence describing the error.
    public var description: String {
        switch self {
        case .cancelled:
            "The operation was cancelled, so it has no result."
        case .notFinished:
            "The operation has not finished yet; wait for it (waitUntilFinished()) before reading its result."
        case .failed(let error):
            "The invoked method threw an error: \(error)"
        }
    }
}
