import Operations

/// The demo's stand-in for a server: a temporary directory of text files and a manifest that
/// lists each file's size, CRC-32 and priority.
///
/// The content comes from a fixed seed, so every run produces the same files, word counts and
/// checksums.
struct DemoFiles: Sendable {
    /// The directory that holds the files.
    let directory: String
    /// The names of the files the client wants, in catalog order.
    let names: [String]

    /// The path of the manifest file.
    var manifestPath: String { path(of: "manifest.txt") }

    /// The path of the file called `name`.
    func path(of name: String) -> String {
        "\(directory)/\(name)"
    }

    /// The number of files in the catalog: the most ``create(count:)`` can make.
    static var catalogCount: Int { catalog.count }

    /// Creates the directory, the first `count` files of the catalog and their manifest.
    ///
    /// A file's content does not depend on `count`.
    static func create(count: Int = catalogCount) throws(FileIOError) -> DemoFiles {
        precondition((1...catalogCount).contains(count), "DemoFiles: count must be from 1 to \(catalogCount), not \(count)")
        let directory = try FileIO.makeTemporaryDirectory(prefix: "download-demo")
        let files = DemoFiles(directory: directory, names: catalog.prefix(count).map(\.name))
        var random = SplitMix64(seed: 2024)
        var entries: [ManifestEntry] = []
        for (name, size, priority) in catalog.prefix(count) {
            let content = text(bytes: size, using: &random)
            try FileIO.write(content, to: files.path(of: name))
            entries.append(ManifestEntry(name: name, size: content.count, crc32: Checksum.crc32(content), priority: priority))
        }
        try FileIO.write(Array(Manifest(entries: entries).text.utf8), to: files.manifestPath)
        return files
    }

    /// The files ``create(count:)`` would make, named but not written, for describing the demo's
    /// operations without running them; their paths lead nowhere.
    static func unwritten(count: Int = catalogCount) -> DemoFiles {
        precondition((1...catalogCount).contains(count), "DemoFiles: count must be from 1 to \(catalogCount), not \(count)")
        return DemoFiles(directory: "", names: catalog.prefix(count).map(\.name))
    }

    /// Deletes every file and the directory.
    ///
    /// - Returns: How many files were deleted.
    @discardableResult
    func remove() throws(FileIOError) -> Int {
        for name in names + ["manifest.txt"] {
            try FileIO.removeFile(path(of: name))
        }
        try FileIO.removeDirectory(directory)
        return names.count + 1
    }

    // MARK: Content

    /// The files: two small urgent ones, thirty chapters (21 to 24, the ones the reader has open,
    /// wanted soon) and eight appendices (wanted last). Three are larger than the client's size
    /// limit.
    private static let catalog: [(name: String, size: Int, priority: Op.QueuePriority)] = {
        var random = SplitMix64(seed: 7)
        var files: [(String, Int, Op.QueuePriority)] = [
            ("readme.txt", 2 * 1024, .veryHigh),
            ("index.txt", 1 * 1024, .veryHigh),
        ]
        let oversized: [String: Int] = ["chapter-13.txt": 52, "chapter-27.txt": 61, "appendix-f.txt": 48]
        for chapter in 1...30 {
            let name = "chapter-" + Format.leftPadded(String(chapter), to: 2, with: "0") + ".txt"
            let kilobytes = oversized[name] ?? Int.random(in: 4...36, using: &random)
            files.append((name, kilobytes * 1024, (21...24).contains(chapter) ? .high : .normal))
        }
        for letter in "abcdefgh" {
            let name = "appendix-\(letter).txt"
            let kilobytes = oversized[name] ?? Int.random(in: 2...20, using: &random)
            files.append((name, kilobytes * 1024, .low))
        }
        return files
    }()

    /// The words the text is made of.
    private static let words = [
        "the", "the", "the", "a", "an", "of", "of", "to", "and", "and", "in", "is", "it", "when",
        "queue", "queue", "operation", "operation", "operations", "ready", "waits", "runs", "finishes",
        "cancel", "cancelled", "dependency", "dependencies", "priority", "thread", "threads", "block",
        "completion", "barrier", "manifest", "download", "file", "files", "bytes", "progress",
        "observer", "lock", "worker", "pool", "width", "main", "start", "every", "each", "before", "after",
    ]

    /// About `bytes` bytes of sentences, wrapped at 72 columns.
    private static func text(bytes: Int, using random: inout SplitMix64) -> [UInt8] {
        var text = ""
        var line = ""
        while text.utf8.count + line.utf8.count < bytes {
            var sentence = (0..<Int.random(in: 5...14, using: &random)).map { _ in words.randomElement(using: &random)! }
            sentence[0] = sentence[0].prefix(1).uppercased() + sentence[0].dropFirst()
            for (index, word) in sentence.enumerated() {
                let piece = index == sentence.count - 1 ? word + "." : word
                if line.utf8.count + piece.utf8.count + 1 > 72 {
                    text += line + "\n"
                    line = ""
                }
                line += line.isEmpty ? piece : " " + piece
            }
        }
        text += line + "\n"
        return Array(text.utf8)
    }
}
