/// A failed file system call, with the path and the C `errno`.
struct FileIOError: Error, CustomStringConvertible {
    /// The C function that failed, such as `fopen`.
    var operation: String
    /// The file or directory it was called on.
    var path: String
    /// The `errno` it left.
    var code: Int32

    /// A sentence naming the call, the path and the error number.
    var description: String {
        "\(operation)(\(path)) failed with errno \(code)"
    }
}
