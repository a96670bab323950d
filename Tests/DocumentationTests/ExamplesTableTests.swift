import ExampleCatalog
import Foundation
import Testing

/// The README's table of examples lists every example of the catalog, in order, with its title
/// and source, and nothing else.
@Suite("README examples table")
struct ExamplesTableTests {
    /// The rows of the table, as (name, title, source).
    private static func readmeRows() throws -> [(name: String, title: String, source: String)] {
        let lines = try MarkedBlock.lines(
            between: "<!-- BEGIN examples table -->", and: "<!-- END examples table -->", in: "README.md")
        return lines.dropFirst(2).compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 5 else { return nil }
            return (cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`")), cells[2], cells[3])
        }
    }

    @Test("the README lists every example, in the catalog's order, with its title and source")
    func readmeTableMatchesTheCatalog() throws {
        let rows = try Self.readmeRows()
        #expect(rows.map(\.name) == Catalog.all.map(\.name))
        for (row, example) in zip(rows, Catalog.all) {
            #expect(row.title == example.title, "README title of \(example.name)")
            #expect(row.source == example.source, "README source of \(example.name)")
        }
    }
}
