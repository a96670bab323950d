// The text of a dump: the format documented on `OpQueue.dump()`. Stable and line-oriented: tests
// and scripts grep it.

extension QueueDump {
    /// How many related operations a hold names before it says "and N more".
    static let shownLimit = 5

    /// The dump as text: the header line, then one line per member shown, then a line counting
    /// the members not shown (if any). No trailing newline.
    var text: String {
        renderedLines.joined(separator: "\n")
    }

    /// The header line, the member lines and the line counting the members not shown.
    var renderedLines: [String] {
        var result = [header]
        for line in lines {
            result.append(Self.render(line))
        }
        if omitted > 0 {
            result.append("  … \(omitted) other \(omitted == 1 ? "operation" : "operations") not shown")
        }
        return result
    }

    /// `OpQueue "downloads" (max concurrent: 2, suspended: no): 5 operations, 2 running`.
    var header: String {
        let width = maxConcurrentOperationCount < 0 ? "default" : "\(maxConcurrentOperationCount)"
        let count = "\(operationCount) \(operationCount == 1 ? "operation" : "operations")"
        return "\(queue) (max concurrent: \(width), suspended: \(isSuspended ? "yes" : "no")): \(count), \(runningCount) running"
    }

    /// `  ⏸ waiting    BlockOp "parse" (priority: normal) — for dependencies: …`.
    static func render(_ line: Line) -> String {
        let symbol: String
        switch line.state {
        case .executing: symbol = "▶"
        case .finishing: symbol = "✓"
        case .waiting, .ready, .cancelled: symbol = "⏸"
        }
        let state = line.state.rawValue
        let padded = state + String(repeating: " ", count: max(0, 10 - state.count))
        var attributes = ["priority: \(line.priority)"]
        if line.isBarrier { attributes.append("barrier") }
        if line.isCancelled && line.state != .cancelled { attributes.append("cancelled") }
        var text = "  \(symbol) \(padded) \(line.operation) (\(attributes.joined(separator: ", ")))"
        if !line.holds.isEmpty {
            text += " — " + line.holds.map(render).joined(separator: "; ")
        }
        return text
    }

    /// One hold, as a clause with a fixed beginning.
    static func render(_ hold: Hold) -> String {
        switch hold {
        case .dependencies(let count, let shown):
            // None left: the last one finished a moment ago, and the member is becoming ready.
            return count == 0 ? "for dependencies: none left, becoming ready" : "for dependencies: \(list(shown, count: count))"
        case .conditionsAfterDependencies(let names):
            return "then conditions: \(names.joined(separator: ", "))"
        case .evaluatingConditions(let names):
            return "evaluating conditions: \(names.joined(separator: ", "))"
        case .exclusivity(let category, let holders, let earlierRequests):
            if holders.isEmpty {
                return "for exclusivity \"\(category)\": asked for earlier by \(list(earlierRequests, count: earlierRequests.count))"
            }
            return "for exclusivity \"\(category)\": held by \(list(holders, count: holders.count))"
        case .barrier(let barrier):
            return "behind barrier \(render(barrier))"
        case .earlierOperations(let count, let shown):
            return "for \(count) earlier \(count == 1 ? "operation" : "operations") to leave: \(list(shown, count: count))"
        case .children(let count, let shown):
            return "for \(count) unfinished \(count == 1 ? "child" : "children"): \(list(shown, count: count))"
        case .suspended:
            return "queue is suspended"
        case .slot(let running, let width):
            return width == 0 ? "for a slot: max concurrent is 0" : "for a slot: \(running) of \(width) running"
        case .aboutToStart:
            return "about to start"
        }
    }

    /// `BlockOp "fetch" (executing, in OpQueue "other")`.
    static func render(_ related: Related) -> String {
        "\(related.operation) (\(related.state)\(related.place.map { ", " + $0 } ?? ""))"
    }

    /// The first operations of a list of `count`, then ", and N more" for the others.
    private static func list(_ shown: [Related], count: Int) -> String {
        let named = shown.prefix(shownLimit).map(render).joined(separator: ", ")
        let more = count - min(shown.count, shownLimit)
        return more > 0 ? "\(named), and \(more) more" : named
    }

    /// `text` with its line breaks replaced by spaces, so that a dump keeps one line per member.
    static func oneLine(_ text: String) -> String {
        guard text.contains(where: \.isNewline) else { return text }
        return String(text.map { $0.isNewline ? " " : $0 })
    }
}
