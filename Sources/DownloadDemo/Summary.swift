import Operations

/// The final report, built by the summary operation from the results of the processing
/// operations it depends on.
struct Summary {
    /// The files that were downloaded and processed, in catalog order.
    var reports: [FileReport] = []
    /// The files whose download was cancelled, and why.
    var cancelled: [(file: String, reason: String)] = []
    /// Everything else that went wrong.
    var failures: [String] = []
    /// The most downloads that ran at once.
    var peakDownloads: Int
    /// The download queue's width.
    var downloadLimit: Int
    /// The downloads in the order they started, with their priorities.
    var startOrder: [(name: String, priority: Op.QueuePriority)]
    /// The most frequent words over all files.
    var topWords: [(word: String, count: Int)]
    /// The milliseconds since the demo started.
    var elapsedMilliseconds: Int

    /// Collects the results of `processing`, which must all be finished.
    init(processing: [InvocationOp<FileReport>], tracker: DownloadTracker, processor: Processor, downloadLimit: Int) {
        peakDownloads = tracker.peak
        self.downloadLimit = downloadLimit
        startOrder = tracker.startOrder
        topWords = processor.topWords(5)
        elapsedMilliseconds = Console.elapsedMilliseconds
        for operation in processing {
            do throws(InvocationOpError) {
                reports.append(try operation.result)
            } catch {
                switch error {
                case .failed(ProcessingError.downloadCancelled(let file, let reason)):
                    cancelled.append((file, reason))
                case .failed(let error):
                    failures.append("\(error)")
                case .cancelled, .notFinished:
                    failures.append("\(operation): \(error)")
                }
            }
        }
    }

    /// Whether everything the demo checks held: no failure, and no more downloads at once than
    /// the queue's width.
    var isSuccessful: Bool {
        failures.isEmpty && peakDownloads <= downloadLimit
    }

    /// The report, as lines of text.
    var lines: [String] {
        func row(_ label: String, _ value: String) -> String {
            "  " + Format.padded(label, to: 27) + value
        }
        let bytes = reports.reduce(0) { $0 + $1.bytes }
        let lines = reports.reduce(0) { $0 + $1.lines }
        let words = reports.reduce(0) { $0 + $1.words }
        var crcs: [UInt8] = []
        var hashes: [UInt8] = []
        for report in reports {
            withUnsafeBytes(of: report.crc32.littleEndian) { crcs.append(contentsOf: $0) }
            withUnsafeBytes(of: report.fnv1a.littleEndian) { hashes.append(contentsOf: $0) }
        }
        let total = reports.count + cancelled.count + failures.count

        var text = ["", "──────────────────────────── summary ────────────────────────────"]
        text.append(row("files in the catalog", "\(total)"))
        text.append(row("downloaded and processed", "\(reports.count), every CRC-32 matches the manifest"))
        text.append(row("cancelled", "\(cancelled.count), their processing ops ran and saw it"))
        for (file, reason) in cancelled {
            text.append(row("  " + file, reason))
        }
        if !failures.isEmpty {
            text.append(row("FAILED", "\(failures.count)"))
            text += failures.map { row("", $0) }
        }
        text.append(row("total downloaded", "\(Format.kilobytes(bytes)) (\(Format.grouped(bytes)) bytes)"))
        text.append(row("lines / words", "\(Format.grouped(lines)) / \(Format.grouped(words))"))
        text.append(row("most frequent words", topWords.map { "\($0.word) \(Format.grouped($0.count))" }.joined(separator: ", ")))
        text.append(row("CRC-32 of the CRC-32s", Format.hex(Checksum.crc32(crcs))))
        text.append(row("FNV-1a of the FNV-1as", Format.hex(Checksum.fnv1a(hashes))))
        // The first nine, three a line; fewer when fewer started (`--files N`).
        let firstStarts = startOrder.prefix(9).map { "\($0.name) (\($0.priority))" }
        for start in stride(from: 0, to: firstStarts.count, by: 3) {
            let end = min(start + 3, firstStarts.count)
            let more = end < firstStarts.count ? "," : end < startOrder.count ? ", …" : ""
            text.append(row(start == 0 ? "first downloads to start" : "", firstStarts[start..<end].joined(separator: ", ") + more))
        }
        if let firstLow = startOrder.firstIndex(where: { $0.priority < .normal }) {
            text.append(row("", "the .low appendices started from #\(firstLow + 1) of \(startOrder.count)"))
        }
        text.append(row("peak concurrent downloads", "\(peakDownloads) (maxConcurrentOperationCount \(downloadLimit)) \(peakDownloads <= downloadLimit ? "✓" : "✗ TOO MANY")"))
        text.append(row("elapsed", "\(elapsedMilliseconds) ms"))
        text.append("─────────────────────────────────────────────────────────────────")
        return text
    }
}
