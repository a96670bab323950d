/// Why a transfer of the ``SimulatedTransport`` ended without all of its data, the stand-in for
/// the `NSURLError…` codes a real session reports.
enum TransportError: Error, Equatable, CustomStringConvertible {
    /// The task was cancelled (by its operation, the caller, or a timeout).
    case cancelled
    /// The transport serves nothing under that name.
    case notFound
    /// The transport dropped the connection part-way through.
    case connectionReset

    var description: String {
        switch self {
        case .cancelled: "cancelled"
        case .notFound: "not found"
        case .connectionReset: "connection reset by peer"
        }
    }
}
