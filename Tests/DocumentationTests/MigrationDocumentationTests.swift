import Foundation
import Testing

/// The README and the DocC article *Moving from Foundation* share two blocks of text, each between
/// `<!-- BEGIN shared: name -->` and `<!-- END shared: name -->` lines: the table of Foundation's
/// members and ours, and the list of differences. These tests keep the two copies identical.
@Suite("Migration documentation")
struct MigrationDocumentationTests {
    /// The names of the shared blocks.
    static let blockNames = ["foundation-members", "differences"]

    /// The documents that hold a copy of every shared block, relative to the package root.
    static let readmePath = "README.md"
    static let articlePath = "Sources/Operations/Operations.docc/MovingFromFoundation.md"

    @Test("Each shared block is the same in the README and in the article", arguments: blockNames)
    func blocksAreIdentical(name: String) throws {
        let readme = try Self.block(name, in: Self.readmePath)
        let article = try Self.block(name, in: Self.articlePath)
        guard readme != article else { return }
        let count = max(readme.count, article.count)
        let index = (0..<count).first { index in
            index >= readme.count || index >= article.count || readme[index] != article[index]
        }!
        let readmeLine = index < readme.count ? readme[index] : "(the block ends here)"
        let articleLine = index < article.count ? article[index] : "(the block ends here)"
        Issue.record("""
            The shared block "\(name)" differs between \(Self.readmePath) and \(Self.articlePath), \
            first at line \(index + 1) of the block:
              \(Self.readmePath): \(readmeLine)
              \(Self.articlePath): \(articleLine)
            Edit one copy, then copy the whole block to the other.
            """)
    }

    @Test("Each shared block has content in both documents", arguments: blockNames)
    func blocksAreNotEmpty(name: String) throws {
        for path in [Self.readmePath, Self.articlePath] {
            let lines = try Self.block(name, in: path)
            let content = lines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            #expect(!content.isEmpty, "The shared block \"\(name)\" in \(path) is empty.")
        }
    }

    @Test("The shared blocks use plain code spans, not DocC symbol links", arguments: blockNames)
    func blocksHaveNoSymbolLinks(name: String) throws {
        for (offset, line) in try Self.block(name, in: Self.articlePath).enumerated() {
            #expect(!line.contains("``") && !line.contains("<doc:"),
                    "Line \(offset + 1) of the shared block \"\(name)\" uses DocC link syntax, which GitHub shows as is: \(line)")
        }
    }

    @Test("The members table names every public type that stands for a Foundation type")
    func membersBlockNamesEveryType() throws {
        let text = try Self.block("foundation-members", in: Self.articlePath).joined(separator: "\n")
        for type in ["Op", "BlockOp", "InvocationOp", "AsyncOp", "OpQueue"] {
            #expect(text.contains("`\(type)`") || text.contains("`\(type)<"),
                    "The shared block \"foundation-members\" does not mention `\(type)`.")
        }
    }

    /// The public members of Foundation's `Operation`, `BlockOperation`, `NSInvocationOperation`
    /// and `OperationQueue`, as Apple documents them: each must have a row.
    static let foundationMembers = [
        // Operation
        "start()", "main()", "isCancelled", "cancel()", "isExecuting", "isFinished", "isConcurrent",
        "isAsynchronous", "isReady", "name", "addDependency(_:)", "removeDependency(_:)",
        "dependencies", "qualityOfService", "threadPriority", "queuePriority", "completionBlock",
        "waitUntilFinished()",
        // BlockOperation
        "init(block:)", "addExecutionBlock(_:)", "executionBlocks",
        // NSInvocationOperation
        "initWithTarget:selector:object:", "initWithInvocation:", "invocation", "result",
        // OperationQueue
        "addOperation(_:)", "addOperations(_:waitUntilFinished:)", "addBarrierBlock(_:)",
        "operations", "operationCount", "cancelAllOperations()", "waitUntilAllOperationsAreFinished()",
        "maxConcurrentOperationCount", "defaultMaxConcurrentOperationCount", "isSuspended",
        "underlyingQueue", "progress", "current", "main",
    ]

    @Test("The members table has a row for every documented member of Foundation's classes",
          arguments: foundationMembers)
    func membersBlockListsFoundationMember(member: String) throws {
        let text = try Self.block("foundation-members", in: Self.articlePath).joined(separator: "\n")
        #expect(text.contains("`\(member)`") || text.contains("`\(member),") || text.contains(".\(member)`")
                    || text.contains(" \(member)`") || text.contains("`\(member) "),
                "The shared block \"foundation-members\" has no row for Foundation's `\(member)`.")
    }

    // MARK: Reading the blocks

    /// The lines of the shared block `name` in the document at `path`, without its markers.
    static func block(_ name: String, in path: String) throws -> [String] {
        try MarkedBlock.lines(between: "<!-- BEGIN shared: \(name) -->", and: "<!-- END shared: \(name) -->", in: path)
    }
}
