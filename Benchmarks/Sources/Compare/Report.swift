import Foundation

/// One line of the comparison table.
struct Row {
    enum Unit {
        /// Report time per operation (the workload runs `count` operations).
        case perOperation(Int)
        /// Report the total time.
        case total
        /// Report bytes per operation (the values are bytes, not seconds).
        case bytesPerOperation
    }

    var name: String
    var unit: Unit
    var ours: Double
    var foundation: Double? = nil
    var dispatch: Double? = nil
    var taskGroup: Double? = nil
    /// A FIFO async queue: an `AsyncStream` drained by one `Task`.
    var fifo: Double? = nil
    /// swift-async-queue's `FIFOQueue` (built only with `SWIFT_ASYNC_QUEUE_PATH`).
    var fifoQueue: Double? = nil
}

/// A ratio an issue asks for: ours / a peer at most `limit`.
struct Target {
    /// The row of the comparison table it is read from.
    var name: String
    var unit: Row.Unit
    var ours: Double
    /// The peer's name, as the table's column has it.
    var peerName: String
    /// The peer's time; nil when the peer is not built (the note says why).
    var peer: Double?
    /// The ratio ours / peer must be at most this.
    var limit: Double
    /// The ratio when the issue was filed, as it gives it.
    var whenFiled: String
    /// Printed under the table when the peer is missing.
    var missingNote: String? = nil
    /// A plainer peer's own ratio to the same peer in the same run (Dispatch, which runs closures
    /// without the Operation model's bookkeeping), printed under the table: a target below it asks
    /// for more than a bare Dispatch queue does on this machine.
    var scale: (name: String, seconds: Double)? = nil
}

/// One row of the cost of composing: the same work with and without groups or conditions.
struct CostRow {
    var name: String
    /// Seconds with the feature.
    var with: Double
    /// Seconds for the same work without it.
    var without: Double
}

/// The comparison table, printed as Markdown.
struct Report {
    private var rows: [Row] = []
    private var costs: [CostRow] = []
    private var notes: [String] = []
    private var targets: [(issue: String, target: Target)] = []

    /// A ratio that an issue asks for, printed in a table of the issue's targets.
    mutating func addTarget(issue: String, _ target: Target) {
        targets.append((issue, target))
    }

    /// A line printed under the tables.
    mutating func addNote(_ note: String) {
        notes.append(note)
    }

    mutating func add(_ row: Row) {
        rows.append(row)
        Swift.print("measured \(row.name)")
        fflush(nil)
    }

    mutating func addCost(_ row: CostRow) {
        costs.append(row)
        Swift.print("measured \(row.name)")
        fflush(nil)
    }

    func print() {
        Swift.print("")
        Swift.print("| workload | ours | Foundation | ours/Foundation | Dispatch | ours/Dispatch | TaskGroup | ours/TaskGroup | FIFO async queue | ours/FIFO | FIFOQueue | ours/FIFOQueue |")
        Swift.print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for row in rows {
            let cells: [String] = [
                row.name,
                format(row.ours, row.unit),
                row.foundation.map { format($0, row.unit) } ?? "–",
                row.foundation.map { ratio(row.ours, $0) } ?? "–",
                row.dispatch.map { format($0, row.unit) } ?? "–",
                row.dispatch.map { ratio(row.ours, $0) } ?? "–",
                row.taskGroup.map { format($0, row.unit) } ?? "–",
                row.taskGroup.map { ratio(row.ours, $0) } ?? "–",
                row.fifo.map { format($0, row.unit) } ?? "–",
                row.fifo.map { ratio(row.ours, $0) } ?? "–",
                row.fifoQueue.map { format($0, row.unit) } ?? "–",
                row.fifoQueue.map { ratio(row.ours, $0) } ?? "–",
            ]
            Swift.print("| " + cells.joined(separator: " | ") + " |")
        }
        for note in notes {
            Swift.print("")
            Swift.print(note)
        }
        printTargets()
        guard !costs.isEmpty else { return }
        Swift.print("")
        Swift.print("| composition | with | without | with/without |")
        Swift.print("|---|---:|---:|---:|")
        for row in costs {
            let cells = [row.name, format(row.with, .total), format(row.without, .total), ratio(row.with, row.without)]
            Swift.print("| " + cells.joined(separator: " | ") + " |")
        }
    }

    /// The issues' targets: ours, the peer, the ratio, the limit, the ratio when the issue was filed, and whether
    /// the limit is met.
    private func printTargets() {
        var issues: [String] = []
        for (issue, _) in targets where !issues.contains(issue) { issues.append(issue) }
        for issue in issues {
            Swift.print("")
            Swift.print("\(issue)'s targets:")
            Swift.print("")
            Swift.print("| row | ours | peer | ours/peer | target | when filed | met |")
            Swift.print("|---|---:|---|---:|---:|---:|---|")
            var missing: [String] = []
            var scales: [String] = []
            for (rowIssue, target) in targets where rowIssue == issue {
                if let scale = target.scale, let peer = target.peer {
                    scales.append("\(target.name), for scale: \(scale.name) \(format(scale.seconds, target.unit)), "
                                  + "\(scale.name)/\(target.peerName) \(ratio(scale.seconds, peer)) in the same run "
                                  + "(the target is ≤ \(fixed(target.limit, digits: 2))).")
                }
                let peer = target.peer.map { "\(target.peerName): \(format($0, target.unit))" } ?? "\(target.peerName): not built"
                let measured = target.peer.map { target.ours / $0 }
                let cells: [String] = [
                    target.name,
                    format(target.ours, target.unit),
                    peer,
                    target.peer.map { ratio(target.ours, $0) } ?? "–",
                    "≤ " + fixed(target.limit, digits: target.limit < 0.01 ? 4 : 2),
                    target.whenFiled,
                    measured.map { $0 <= target.limit ? "yes" : "no" } ?? "–",
                ]
                Swift.print("| " + cells.joined(separator: " | ") + " |")
                if target.peer == nil, let note = target.missingNote { missing.append(note) }
            }
            for note in missing {
                Swift.print("")
                Swift.print(note)
            }
            if !scales.isEmpty {
                Swift.print("")
                for line in scales { Swift.print(line) }
            }
        }
    }

    private func format(_ seconds: Double, _ unit: Row.Unit) -> String {
        switch unit {
        case .perOperation(let count):
            return fixed(seconds / Double(count) * 1e6, digits: 2) + " µs/op"
        case .total:
            if seconds >= 1 { return fixed(seconds, digits: 2) + " s" }
            if seconds >= 0.001 { return fixed(seconds * 1e3, digits: 1) + " ms" }
            return fixed(seconds * 1e6, digits: 1) + " µs"
        case .bytesPerOperation:
            return "\(Int(seconds)) B/op"
        }
    }

    private func ratio(_ ours: Double, _ peer: Double) -> String {
        fixed(ours / peer, digits: ours / peer < 0.01 ? 4 : 2)
    }

    private func fixed(_ value: Double, digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        var text = "\(rounded)"
        if let dot = text.firstIndex(of: ".") {
            let decimals = text.distance(from: dot, to: text.endIndex) - 1
            if decimals < digits { text += String(repeating: "0", count: digits - decimals) }
        }
        return text
    }
}
