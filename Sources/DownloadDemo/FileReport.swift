import Operations

/// What processing one downloaded file found.
struct FileReport: Sendable {
    /// The file's name.
    var name: String
    /// Its size in bytes.
    var bytes: Int
    /// Its number of lines.
    var lines: Int
    /// Its number of words (runs of letters).
    var words: Int
    /// Its 64-bit FNV-1a hash.
    var fnv1a: UInt64
    /// Its CRC-32, equal to the manifest's.
    var crc32: UInt32
    /// The priority its download ran at.
    var priority: Op.QueuePriority
}
