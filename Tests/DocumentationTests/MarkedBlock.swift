import Foundation

/// Reads the lines between two marker lines of a document of the package (HTML comments, which
/// neither GitHub nor DocC shows).
enum MarkedBlock {
    /// The package root: this file is `<root>/Tests/DocumentationTests/<this file>`.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A document lacks a marker, or has one twice, or has them in the wrong order.
    struct Missing: Error, CustomStringConvertible {
        let description: String
    }

    /// The lines between the line `begin` and the line `end` of the document at `path` (relative
    /// to the package root), without the markers. Throws unless each marker is on a line of its
    /// own, exactly once, `begin` before `end`.
    static func lines(between begin: String, and end: String, in path: String) throws -> [String] {
        let url = packageRoot.appendingPathComponent(path)
        let text = try String(contentsOf: url, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasSuffix("\r") ? String(line.dropLast()) : String(line)
        }
        let begins = lines.indices.filter { lines[$0].trimmingCharacters(in: .whitespaces) == begin }
        let ends = lines.indices.filter { lines[$0].trimmingCharacters(in: .whitespaces) == end }
        guard begins.count == 1, ends.count == 1, let first = begins.first, let last = ends.first, first < last else {
            throw Missing(description: """
                \(path) must contain the line "\(begin)" once, followed later by the line "\(end)" once \
                (found \(begins.count) and \(ends.count) of them).
                """)
        }
        return Array(lines[(first + 1)..<last])
    }
}
