import Foundation
import Testing
@testable import Operations

/// Renders ``OpGraph/dot`` with Graphviz's `dot` and checks the picture: that Graphviz accepts
/// the DOT, and that what the DOT means (labels, clusters, red) reaches the SVG.
///
/// Needs `dot` on the `PATH`. Without it the tests are skipped, so that `swift test` passes on a
/// machine with nothing but Swift, unless `OPERATIONS_REQUIRE_GRAPHVIZ=1` asks for them (CI installs
/// graphviz and sets it): then a missing `dot` fails them, and says so.
@Suite(.enabled(if: findDot() != nil || graphvizIsRequired,
                "Graphviz's `dot` is not on the PATH; set OPERATIONS_REQUIRE_GRAPHVIZ=1 to fail instead of skipping"))
struct OpGraphRenderingTests {
    @Test func graphvizRendersEveryOperationAsANodeLabelledWithItsName() throws {
        let scene = Scene()
        defer { scene.tearDown() }
        let svg = try renderSVG(scene.graph.dot)

        #expect(svg.contains("<svg"))
        #expect(svg.contains("</svg>"))
        let nodes = SVGNode.parse(svg, kind: "node")
        #expect(nodes.count == scene.graph.nodes.count)
        #expect(scene.graph.nodes.count == scene.operations.count)
        for operation in scene.operations {
            let node = try #require(scene.node(of: operation))
            let rendered = try #require(nodes.first { $0.title == "n\(node.id)" }, "no SVG node for \(operation)")
            #expect(rendered.texts.first == operation.description)
            #expect(rendered.texts.contains { $0.contains(node.state) })
        }
        #expect(svg.components(separatedBy: "class=\"edge\"").count - 1 == scene.graph.edges.count)
        // The queue of each queued operation is in its label, across both queues.
        #expect(nodes.first { $0.texts.first == scene.fetch.description }?.texts.contains("queue: fetching") == true)
        #expect(nodes.first { $0.texts.first == scene.store.description }?.texts.contains("queue: storing") == true)
    }

    @Test func graphvizDrawsAGroupAsAClusterAroundItsChildren() throws {
        let scene = Scene()
        defer { scene.tearDown() }
        let svg = try renderSVG(scene.graph.dot)

        let group = try #require(scene.node(of: scene.thumbnails))
        let clusters = SVGNode.parse(svg, kind: "cluster")
        #expect(clusters.count == 1)
        let cluster = try #require(clusters.first { $0.title == "cluster_\(group.id)" })
        #expect(cluster.texts == [scene.thumbnails.description])
        // The children are nodes of the graph inside the group.
        for child in scene.thumbnails.children {
            #expect(scene.node(of: child)?.group == group.id)
        }
    }

    @Test func graphvizDrawsTheCycleAndTheFailedOperationInRed() throws {
        let scene = Scene()
        defer { scene.tearDown() }
        let svg = try renderSVG(scene.graph.dot)

        let nodes = SVGNode.parse(svg, kind: "node")
        let red = Set([scene.cycleA, scene.cycleB, scene.failed].map(\.description))
        for rendered in nodes {
            let label = try #require(rendered.texts.first)
            #expect(rendered.isRed == red.contains(label), "\(label) is \(rendered.isRed ? "" : "not ")red")
        }
        #expect(nodes.first { $0.texts.first == scene.cycleA.description }?.texts.contains("on a dependency cycle") == true)
        #expect(nodes.first { $0.texts.first == scene.failed.description }?.texts.contains("failed") == true)
        // Only the edges of the cycle are red.
        let edges = SVGNode.parse(svg, kind: "edge")
        #expect(edges.filter(\.isRed).count == 2)
        // The cancelled operation is finished and greyed, not red.
        let cancelled = try #require(nodes.first { $0.texts.first == scene.cancelled.description })
        #expect(cancelled.texts.contains { $0.contains("cancelled") })
        #expect(cancelled.source.contains("#eeeeee"))
    }
}

// MARK: The graph

/// A small but complete graph of operations: dependencies within and across two suspended
/// queues, a group with children, a failed and a cancelled operation, and a dependency cycle
/// that is never queued.
private final class Scene {
    private struct Failure: Error {}

    let fetching = OpQueue()
    let storing = OpQueue()
    let fetch = BlockOp {}
    let parse = BlockOp {}
    let store = BlockOp {}
    let thumbnails: GroupOp
    let failed = ResultOp<Int> { throw Failure() }
    let cancelled = BlockOp {}
    let cycleA = BlockOp {}
    let cycleB = BlockOp {}
    /// Every operation, the group's children included.
    let operations: [Op]
    /// The graph, taken once everything is in place.
    let graph: OpGraph

    init() {
        fetching.name = "fetching"
        storing.name = "storing"
        fetching.isSuspended = true
        storing.isSuspended = true

        fetch.name = "fetch feed"
        parse.name = "parse feed"
        store.name = "store items"
        parse.addDependency(fetch)
        store.addDependency(parse)  // across queues

        let small = BlockOp {}
        small.name = "small thumbnail"
        let large = BlockOp {}
        large.name = "large thumbnail"
        large.addDependency(small)
        thumbnails = GroupOp(operations: [small, large])
        thumbnails.name = "thumbnails"
        thumbnails.addDependency(parse)

        failed.name = "decode \"bad\" item"
        failed.start()  // finishes at once, with its error
        cancelled.name = "prefetch"
        cancelled.cancel()
        cancelled.start()  // finishes at once, cancelled

        // Never queued, so that no queue's cycle watch acts on it; tearDown() cancels it.
        cycleA.name = "refresh A"
        cycleB.name = "refresh B"
        cycleA.addDependency(cycleB)
        cycleB.addDependency(cycleA)
        store.addDependency(cycleA)

        fetching.addOperations([fetch, parse], waitUntilFinished: false)
        storing.addOperations([store, thumbnails], waitUntilFinished: false)
        operations = [fetch, parse, store, thumbnails, small, large, failed, cancelled, cycleA, cycleB]
        graph = OpGraph([fetch, parse, store, thumbnails, failed, cancelled])
    }

    /// The node drawn for `operation`.
    func node(of operation: Op) -> OpGraph.Node? {
        graph.nodes.first { $0.label == operation.description }
    }

    /// Cancels what is queued and lets the queues drain.
    func tearDown() {
        cycleA.cancel()
        cycleB.cancel()
        for queue in [fetching, storing] {
            queue.cancelAllOperations()
            queue.isSuspended = false
        }
        for queue in [fetching, storing] {
            queue.waitUntilAllOperationsAreFinished()
        }
    }
}

// MARK: Graphviz

/// Whether the environment asks for the Graphviz tests to run (and fail without `dot`).
private let graphvizIsRequired = ProcessInfo.processInfo.environment["OPERATIONS_REQUIRE_GRAPHVIZ"] == "1"

/// Graphviz's `dot` on the `PATH`, or `nil`.
private func findDot() -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") {
        let candidate = "\(directory)/dot"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}

/// `dot` piped through `dot -Tsvg`: the SVG, after checking that `dot` exited with status 0.
private func renderSVG(_ dot: String) throws -> String {
    let executable = try #require(
        findDot(),
        "Graphviz's `dot` is not on the PATH: install graphviz (`apt-get install graphviz`, `brew install graphviz`) to run OpGraphRenderingTests; .ci/run installs it")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = ["-Tsvg"]
    let input = Pipe(), output = Pipe(), errors = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    // The graph is a few kilobytes: it fits in the pipe, and dot reads it all before writing.
    input.fileHandleForWriting.write(Data(dot.utf8))
    try input.fileHandleForWriting.close()
    let svg = output.fileHandleForReading.readDataToEndOfFile()
    let messages = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "dot -Tsvg failed: \(String(decoding: messages, as: UTF8.self))\n\(dot)")
    // Graphviz names its input in what it says about the DOT; other noise (fonts) is the host's.
    let said = String(decoding: messages, as: UTF8.self)
    #expect(!said.contains("<stdin>"), "dot -Tsvg warned about the DOT: \(said)")
    return String(decoding: svg, as: UTF8.self)
}

/// One `<g class="...">` element of Graphviz's SVG: a node, an edge or a cluster.
private struct SVGNode {
    /// The element's source, from `<g` to its `</g>` (Graphviz does not nest these).
    var source: String
    /// The content of its `<title>`: the DOT name, such as `n3` or `cluster_2`.
    var title: String
    /// The content of each `<text>`, unescaped: the label's lines.
    var texts: [String]
    /// Whether it is drawn in red.
    var isRed: Bool { source.contains("stroke=\"red\"") }

    /// The elements of class `kind` in `svg`.
    static func parse(_ svg: String, kind: String) -> [SVGNode] {
        svg.components(separatedBy: "<g id=\"").dropFirst().compactMap { chunk in
            guard chunk.contains("class=\"\(kind)\"") else { return nil }
            let source = chunk.components(separatedBy: "</g>")[0]
            return SVGNode(
                source: source,
                title: unescaped(contents(of: "title", in: source).first ?? ""),
                texts: contents(of: "text", in: source).map(unescaped))
        }
    }

    /// The contents of each `<tag ...>…</tag>` in `source`.
    private static func contents(of tag: String, in source: String) -> [String] {
        source.components(separatedBy: "<\(tag)").dropFirst().compactMap { piece in
            guard let start = piece.firstIndex(of: ">") else { return nil }
            return piece[piece.index(after: start)...].components(separatedBy: "</\(tag)>").first
        }
    }

    /// `text` with the XML entities Graphviz writes replaced by their characters.
    private static func unescaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"")
            .replacingOccurrences(of: "&#45;", with: "-")
            .replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&#160;", with: " ")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}
