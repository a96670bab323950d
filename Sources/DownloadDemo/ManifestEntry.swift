import Operations

/// One line of the manifest: a file the server offers, its size, its checksum and how urgently
/// the client should fetch it.
struct ManifestEntry: Sendable, Equatable {
    /// The file's name in the server's directory.
    var name: String
    /// The file's size in bytes.
    var size: Int
    /// The CRC-32 of the file's content, to verify the download against.
    var crc32: UInt32
    /// The queue priority the manifest asks for.
    var priority: Op.QueuePriority

    /// The entry as a manifest line: `name size crc32 priority`.
    var line: String {
        "\(name) \(size) \(String(crc32, radix: 16)) \(priority)"
    }
}
