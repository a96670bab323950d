/// Why a file could not be processed.
enum ProcessingError: Error, CustomStringConvertible {
    /// The download was cancelled, so there is nothing (or only part of the file) to process.
    case downloadCancelled(file: String, reason: String)
    /// The download failed.
    case downloadFailed(file: String, reason: String)
    /// The content does not match the manifest's CRC-32.
    case checksumMismatch(file: String, expected: UInt32, actual: UInt32)

    /// A sentence describing the error.
    var description: String {
        switch self {
        case .downloadCancelled(let file, let reason):
            "the download of \(file) was cancelled (\(reason))"
        case .downloadFailed(let file, let reason):
            "the download of \(file) failed: \(reason)"
        case .checksumMismatch(let file, let expected, let actual):
            "\(file) has CRC-32 \(Format.hex(actual)), the manifest says \(Format.hex(expected))"
        }
    }
}
