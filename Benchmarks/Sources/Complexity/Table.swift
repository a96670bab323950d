import Foundation

/// The tables of the checks, in Markdown, and the line printed as each row is measured.
enum Table {
    static func printGrowth(_ rows: [Checks.GrowthRow]) {
        print("| check | what grows | N | t(N) | t(2N) | t(2N)/t(N): CPU, wall | limit | heap gained, 2nd half: N → 2N | verdict |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---|")
        for row in rows { print(line(row)) }
    }

    static func printFigures(_ rows: [Checks.FigureRow]) {
        print("| figure | wanted | measured | t | baseline | t | ratio: CPU, wall | limit | verdict |")
        print("|---|---|---|---:|---|---:|---:|---:|---|")
        for row in rows { print(line(row)) }
    }

    static func line(_ row: Checks.GrowthRow) -> String {
        let measured = row.measured
        let cells = [
            row.check.name,
            row.check.grows,
            row.n.map(grouped) ?? "–",
            measured.map { time($0.fastestA) } ?? "–",
            measured.map { time($0.fastestB) } ?? "–",
            measured.map { ratio($0.ratioOfB) } ?? "–",
            fixed(Verdicts.growthLimit),
            kept(row),
            verdict(failure: row.failure, judgement: row.judgement, measurements: row.measurements),
        ]
        return "| " + cells.joined(separator: " | ") + " |"
    }

    static func line(_ row: Checks.FigureRow) -> String {
        let measured = row.measured
        let cells = [
            row.figure.name,
            row.figure.wanted,
            row.figure.measured.description,
            measured.map { time($0.fastestA) } ?? "–",
            row.figure.baseline.description,
            measured.map { time($0.fastestB) } ?? "–",
            measured.map { ratio($0.ratioOfA) } ?? "–",
            fixed(row.figure.limit),
            verdict(failure: row.failure, judgement: row.judgement, measurements: row.measurements),
        ]
        return "| " + cells.joined(separator: " | ") + " |"
    }

    private static func kept(_ row: Checks.GrowthRow) -> String {
        guard row.check.checksMemory, let a = row.measured?.keptA, let b = row.measured?.keptB else { return "–" }
        return "\(bytes(a)) → \(bytes(b))"
    }

    private static func verdict(failure: String?, judgement: Verdicts.Judgement?, measurements: Int) -> String {
        if let failure { return "**\(failure)**" }
        guard let judgement else { return "–" }
        var text: String
        switch (judgement.timeFails, judgement.memoryFails) {
        case (false, false): text = "ok"
        case (true, false): text = "**FAIL** (time)"
        case (false, true): text = "**FAIL** (memory)"
        case (true, true): text = "**FAIL** (time, memory)"
        }
        if measurements > 1 { text += ", measured \(measurements)×" }
        return text
    }

    /// Both ratios, CPU time first.
    private static func ratio(_ ratio: Ratio) -> String {
        "\(fixed(ratio.cpu)), \(fixed(ratio.wall))"
    }

    static func time(_ seconds: Double) -> String {
        if seconds >= 1 { return String(format: "%.2f s", seconds) }
        if seconds >= 0.001 { return String(format: "%.1f ms", seconds * 1e3) }
        return String(format: "%.0f µs", seconds * 1e6)
    }

    static func fixed(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : String(format: "%.2f", value)
    }

    static func bytes(_ count: Int) -> String {
        let magnitude = abs(count)
        if magnitude >= 10 << 20 { return String(format: "%.1f MB", Double(count) / Double(1 << 20)) }
        if magnitude >= 10 << 10 { return String(format: "%.0f KB", Double(count) / Double(1 << 10)) }
        return "\(count) B"
    }

    static func grouped(_ value: Int) -> String {
        var digits = Array(String(value))
        var index = digits.count - 3
        while index > 0 {
            digits.insert(",", at: index)
            index -= 3
        }
        return String(digits)
    }
}
