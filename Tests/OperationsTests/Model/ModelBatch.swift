import Foundation

/// Runs model sequences in a child process (an exit test), so that a trap in the library ends the
/// child, not the test run, and the parent can still shrink the sequence that trapped.
///
/// The child writes what it is doing to a status file: the sequence it is about to run, then the
/// failure it found, or that all passed. A child that stops without a verdict trapped while
/// running the sequence named last.
enum ModelBatch {
    /// What the child reports through the status file.
    struct Status: Codable {
        enum State: String, Codable { case running, failed, passed }
        var state: State
        var sequence: ModelSequence?
        var failure: ModelFailure?
        var sequencesRun: Int
        var statistics: [String: Int] = [:]
    }

    /// How long a phase may take in the batch (only a hang waits that long).
    static let batchPhaseTimeout = 20.0
    /// How long a phase may take while shrinking (a hang reproduces; waiting long is wasted).
    static let shrinkPhaseTimeout = 4.0

    static func write(_ status: Status, to path: String) {
        let data = try! JSONEncoder().encode(status)
        _ = FileManager.default.createFile(atPath: path, contents: data)
    }

    static func read(_ path: String) -> Status? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONDecoder().decode(Status.self, from: data)
    }

    /// Normalizes, plays and checks one sequence; the failure, if any.
    static func check(_ sequence: ModelSequence, phaseTimeout: Double, prefix: String, defects: ModelKnownDefects) -> ModelFailure? {
        var statistics: [String: Int] = [:]
        return check(sequence, phaseTimeout: phaseTimeout, prefix: prefix, defects: defects, statistics: &statistics)
    }

    /// Normalizes, plays and checks one sequence, counting what it exercised; the failure, if any.
    static func check(_ sequence: ModelSequence, phaseTimeout: Double, prefix: String, defects: ModelKnownDefects,
                      statistics: inout [String: Int]) -> ModelFailure? {
        let (normalized, model) = ReferenceModel.normalized(sequence)
        let runner = ModelRunner(sequence: normalized, model: model, prefix: prefix, phaseTimeout: phaseTimeout)
        let outcome = runner.play()
        let records = model.ops.keys.map { outcome.recorder.record(of: $0) }
        statistics["steps", default: 0] += normalized.commands.count
        statistics["operations", default: 0] += model.ops.count
        statistics["bodies run", default: 0] += records.count { !$0.starts.isEmpty }
        statistics["cancelled", default: 0] += records.count { $0.final?.isCancelled == true }
        statistics["failed conditions", default: 0] += records.count { if case .conditionFailed? = $0.final?.error { true } else { false } }
        statistics["groups", default: 0] += model.ops.values.count(where: \.kind.isGroup)
        if sequence.mode == .staged {
            statistics["run phases", default: 0] += model.phaseCount
            statistics["start orders checked", default: 0] += model.orderSnapshots.count { $0.isDeterminate && $0.members.values.count(where: \.runs) > 1 }
        }
        return ModelChecker(sequence: normalized, model: model, outcome: outcome, defects: defects).failure()
    }

    /// The child's side of a batch: `count` sequences from `seed` on, stopping at the first failure,
    /// or once `seconds` have passed.
    static func runBatch(mode: ModelSequence.Mode, seed: UInt64, count: Int, seconds: Double, defects: ModelKnownDefects,
                         statusPath: String) {
        var seed = seed
        var statistics: [String: Int] = [:]
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        for index in 0..<count {
            if ContinuousClock.now > deadline {
                write(Status(state: .passed, sequencesRun: index, statistics: statistics), to: statusPath)
                return
            }
            let sequence = ModelGenerator.sequence(seed: seed, mode: mode, defects: defects)
            write(Status(state: .running, sequence: sequence, sequencesRun: index), to: statusPath)
            if let failure = check(sequence, phaseTimeout: batchPhaseTimeout, prefix: "m\(seed)", defects: defects, statistics: &statistics) {
                write(Status(state: .failed, sequence: sequence, failure: failure, sequencesRun: index + 1), to: statusPath)
                return
            }
            var next = SplitMix64(seed: seed)
            seed = next.next()
        }
        write(Status(state: .passed, sequencesRun: count, statistics: statistics), to: statusPath)
    }

    /// The exit status of a child that found a failure, and of one that did not. A child always
    /// ends with a failing status (a trap ends it with a signal), so that the parent's
    /// `#expect(processExitsWith: .failure)` holds whatever happened and hands over the result.
    static let exitFailed: Int32 = 1
    static let exitPassed: Int32 = 2

    /// The child's side of a batch, then the end of the child.
    static func runBatchAndExit(mode: ModelSequence.Mode, seed: UInt64, count: Int, seconds: Double, defects: ModelKnownDefects,
                                statusPath: String) {
        runBatch(mode: mode, seed: seed, count: count, seconds: seconds, defects: defects, statusPath: statusPath)
        exit(read(statusPath)?.state == .failed ? exitFailed : exitPassed)
    }

    /// The child's side of a shrinking step: plays `sequence` up to `repeats` times; writes the
    /// failure to the status file if one run fails, and ends the child.
    static func runCandidateAndExit(_ sequence: ModelSequence, repeats: Int, defects: ModelKnownDefects, statusPath: String) {
        for attempt in 0..<repeats {
            if let failure = check(sequence, phaseTimeout: shrinkPhaseTimeout, prefix: "s\(attempt)", defects: defects) {
                write(Status(state: .failed, sequence: sequence, failure: failure, sequencesRun: attempt + 1), to: statusPath)
                exit(exitFailed)
            }
        }
        exit(exitPassed)
    }

    /// A status file path unique to this process and call.
    static func temporaryPath(_ label: String) -> String {
        NSTemporaryDirectory() + "operations-model-\(label)-\(getpid())-\(UInt64.random(in: 0..<UInt64.max)).json"
    }
}
