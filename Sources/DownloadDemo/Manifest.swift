import Operations

/// The list of files the server offers, parsed from its manifest file.
///
/// The format is one file per line, `name size crc32 priority`, with `#` starting a comment:
///
/// ```
/// # name size crc32 priority
/// readme.txt 2048 1c291ca3 veryHigh
/// ```
struct Manifest: Sendable {
    /// The files, in the order the manifest lists them.
    var entries: [ManifestEntry]

    /// Creates a manifest from its entries.
    init(entries: [ManifestEntry]) {
        self.entries = entries
    }

    /// Parses the text of a manifest file.
    init(parsing text: String) throws(ManifestError) {
        var entries: [ManifestEntry] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fields = line.split(separator: " ")
            guard fields.count == 4,
                  let size = Int(fields[1]),
                  let crc32 = UInt32(fields[2], radix: 16),
                  let priority = Op.QueuePriority.allCases.first(where: { "\($0)" == fields[3] })
            else {
                throw .malformedLine(number: index + 1, text: String(line))
            }
            entries.append(ManifestEntry(name: String(fields[0]), size: size, crc32: crc32, priority: priority))
        }
        self.entries = entries
    }

    /// The text of the manifest file.
    var text: String {
        "# name size crc32 priority\n" + entries.map { $0.line + "\n" }.joined()
    }

    /// The entry for the file called `name`, if the manifest lists it.
    func entry(named name: String) -> ManifestEntry? {
        entries.first { $0.name == name }
    }
}
