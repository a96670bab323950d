import Foundation

/// Runs the checks, each in child processes, and collects the rows of the tables.
struct Checks {
    /// Runs of each arm per child.
    var repetitions = 5
    /// The N of every growth check, instead of the one each finds for itself.
    var pinnedN: Int?

    /// One growth check's row.
    struct GrowthRow {
        var check: GrowthCheck
        var n: Int?
        var measured: Measured?
        /// A child that trapped, exited with an error or hung.
        var failure: String?
        var judgement: Verdicts.Judgement?
        var measurements = 0

        var passes: Bool { failure == nil && judgement?.passes == true }
    }

    /// One figure's row.
    struct FigureRow {
        var figure: Figure
        var measured: Measured?
        var failure: String?
        var judgement: Verdicts.Judgement?
        var measurements = 0

        var passes: Bool { failure == nil && judgement?.passes == true }
    }

    func run(_ check: GrowthCheck) -> GrowthRow {
        var row = GrowthRow(check: check, n: pinnedN)
        while row.measurements < Verdicts.measurements {
            var arguments = ["growth", check.name]
            if let n = row.n { arguments.append(String(n)) }
            arguments.append(String(repetitions))
            row.measurements += 1
            switch ChildProcess.run(arguments) {
            case .failed(let why):
                row.failure = why
                return row
            case .measured(let measured):
                row.n = row.n ?? measured.n
                if row.measured == nil { row.measured = measured } else { row.measured!.merge(measured) }
            }
            guard let n = row.n, let measured = row.measured else {
                row.failure = "no N reported"
                return row
            }
            let judgement = Verdicts.judgeGrowth(measured, n: n, checksMemory: check.checksMemory)
            row.judgement = judgement
            if judgement.passes || !judgement.worthMeasuringAgain { break }
        }
        return row
    }

    func run(_ figure: Figure) -> FigureRow {
        var row = FigureRow(figure: figure)
        while row.measurements < Verdicts.measurements {
            let arguments = ["pair", figure.measured.workload, String(figure.measured.n),
                             figure.baseline.workload, String(figure.baseline.n), String(repetitions)]
            row.measurements += 1
            switch ChildProcess.run(arguments) {
            case .failed(let why):
                row.failure = why
                return row
            case .measured(let measured):
                if row.measured == nil { row.measured = measured } else { row.measured!.merge(measured) }
            }
            let judgement = Verdicts.judgeFigure(row.measured!, limit: figure.limit)
            row.judgement = judgement
            if judgement.passes || !judgement.worthMeasuringAgain { break }
        }
        return row
    }
}
