import Synchronization

/// Processes downloaded files: counts lines and words, computes an FNV-1a hash and a CRC-32 by
/// hand, verifies the CRC-32 against the manifest, and keeps word totals across all files.
///
/// Its ``process(_:)`` method is what the demo's `InvocationOp`s call, the way an
/// `NSInvocationOperation` calls a method of an existing object.
final class Processor: Sendable {
    private let wordTotals = Mutex<[String: Int]>([:])

    /// Creates a processor with no word counted yet.
    init() {}

    /// Processes the content of a finished download.
    ///
    /// It runs even when the download was cancelled (a cancelled dependency still lets its
    /// dependents start), and then reports the cancellation instead of a result.
    ///
    /// - Throws: ``ProcessingError`` if the download was cancelled or failed, or if the content
    ///   does not match the manifest.
    func process(_ download: FileDownload) throws(ProcessingError) -> FileReport {
        guard !download.isCancelled else {
            let reason = download.cancellationReason ?? "cancelled"
            Console.log("⊘ \(Format.padded(download.fileName, to: 15)) processing ran after the cancelled download and skipped it")
            throw .downloadCancelled(file: download.fileName, reason: reason)
        }
        guard let bytes = download.data, let entry = download.entry else {
            throw .downloadFailed(file: download.fileName, reason: download.failure ?? "no data")
        }
        let crc32 = Checksum.crc32(bytes)
        guard crc32 == entry.crc32 else {
            throw .checksumMismatch(file: download.fileName, expected: entry.crc32, actual: crc32)
        }

        var lines = 0
        var counts: [String: Int] = [:]
        var word: [UInt8] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") { lines += 1 }
            if (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) {
                word.append(byte | 0x20)
            } else if !word.isEmpty {
                counts[String(decoding: word, as: UTF8.self), default: 0] += 1
                word.removeAll(keepingCapacity: true)
            }
        }
        if !word.isEmpty {
            counts[String(decoding: word, as: UTF8.self), default: 0] += 1
        }
        wordTotals.withLock { totals in
            totals.merge(counts, uniquingKeysWith: +)
        }
        return FileReport(
            name: download.fileName,
            bytes: bytes.count,
            lines: lines,
            words: counts.values.reduce(0, +),
            fnv1a: Checksum.fnv1a(bytes),
            crc32: crc32,
            priority: download.queuePriority
        )
    }

    /// The `count` most frequent words over every file processed so far.
    func topWords(_ count: Int) -> [(word: String, count: Int)] {
        let totals = wordTotals.withLock { $0 }
        return totals.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
            .prefix(count)
            .map { ($0.key, $0.value) }
    }
}
