/// Why the manifest could not be loaded.
enum ManifestError: Error, CustomStringConvertible {
    /// The manifest file could not be read.
    case unreadable(FileIOError)
    /// A line is not `name size crc32 priority`.
    case malformedLine(number: Int, text: String)

    /// A sentence describing the error.
    var description: String {
        switch self {
        case .unreadable(let error):
            "the manifest could not be read: \(error)"
        case .malformedLine(let number, let text):
            "line \(number) of the manifest is not `name size crc32 priority`: \"\(text)\""
        }
    }
}
