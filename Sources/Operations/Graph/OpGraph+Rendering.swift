// Rendering a graph of operations as Graphviz DOT and as Mermaid.

extension OpGraph {
    /// The graph in Graphviz's DOT language (`dot -Tsvg graph.dot > graph.svg`).
    public var dot: String {
        var lines = ["digraph operations {", "  rankdir=LR;", "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fillcolor=white];"]
        // Groups become clusters, nested as the groups are; a group's own node sits in its cluster.
        var children = Array(repeating: [Int](), count: nodes.count)
        for node in nodes { if let group = node.group { children[group].append(node.id) } }
        func emit(_ node: Node, indent: String) {
            if node.isGroup {
                lines.append("\(indent)subgraph cluster_\(node.id) {")
                lines.append("\(indent)  label=\"\(OpGraph.escaped(node.label))\"; style=dashed;")
                lines.append("\(indent)  \(nodeStatement(node))")
                for child in children[node.id] { emit(nodes[child], indent: indent + "  ") }
                lines.append("\(indent)}")
            } else {
                lines.append("\(indent)\(nodeStatement(node))")
            }
        }
        for node in nodes where node.group == nil { emit(node, indent: "  ") }
        for edge in edges {
            let red = nodes[edge.dependency].isOnCycle && nodes[edge.dependent].isOnCycle
            lines.append("  n\(edge.dependency) -> n\(edge.dependent)\(red ? " [color=red]" : "");")
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The graph as a Mermaid flowchart (for Markdown that renders Mermaid).
    public var mermaid: String {
        var lines = ["flowchart LR"]
        var children = Array(repeating: [Int](), count: nodes.count)
        for node in nodes { if let group = node.group { children[group].append(node.id) } }
        func emit(_ node: Node, indent: String) {
            lines.append("\(indent)n\(node.id)[\"\(OpGraph.mermaidEscaped(nodeText(node, separator: "<br/>")))\"]")
            if node.isGroup {
                lines.append("\(indent)subgraph g\(node.id)[\"\(OpGraph.mermaidEscaped(node.label))\"]")
                for child in children[node.id] { emit(nodes[child], indent: indent + "  ") }
                lines.append("\(indent)end")
            }
        }
        for node in nodes where node.group == nil { emit(node, indent: "  ") }
        for edge in edges {
            lines.append("  n\(edge.dependency) --> n\(edge.dependent)")
        }
        for node in nodes {
            if node.isOnCycle || node.hasFailed {
                lines.append("  style n\(node.id) stroke:#d00,color:#d00")
            } else if node.isFinished {
                lines.append("  style n\(node.id) fill:#eee,color:#888")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private func nodeStatement(_ node: Node) -> String {
        var attributes = ["label=\"\(OpGraph.escaped(nodeText(node, separator: "\n")))\""]
        if node.isOnCycle || node.hasFailed {
            attributes.append("color=red, fontcolor=red")
        } else if node.isFinished {
            attributes.append("fillcolor=\"#eeeeee\", fontcolor=\"#888888\"")
        }
        return "n\(node.id) [\(attributes.joined(separator: ", "))];"
    }

    private func nodeText(_ node: Node, separator: String) -> String {
        // The type once: a description starts with it unless a subclass overrides it.
        let facts = node.label.hasPrefix(node.type) ? "\(node.state) · \(node.priority)" : "\(node.type) · \(node.state) · \(node.priority)"
        var parts = [node.label, facts]
        if let queue = node.queue { parts.append("queue: \(queue)") }
        if node.isOnCycle { parts.append("on a dependency cycle") }
        if node.hasFailed { parts.append("failed") }
        return parts.joined(separator: separator)
    }

    /// `text` inside a DOT double-quoted string (newlines as `\n`).
    static func escaped(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            default: result.append(character)
            }
        }
        return result
    }

    /// `text` inside a Mermaid double-quoted label.
    static func mermaidEscaped(_ text: String) -> String {
        text.replacingAll("\"", with: "#quot;")
    }
}

extension String {
    /// The string with every `target` character replaced by `replacement` (no Foundation).
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
