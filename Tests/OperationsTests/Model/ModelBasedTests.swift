import Foundation
import Testing

/// The model-based test (issue 22): random sequences of public API calls, played against the
/// library and against ``ReferenceModel``, a small model of the documented rules.
///
/// Each test runs its sequences in a child process (an exit test), so that a trap in the library
/// is reported like any other failure. On a failure, it shrinks the sequence (``ModelShrinker``,
/// each candidate in a child process of its own) and reports the seed and the shortest sequence
/// found, as Swift-like steps.
///
/// Replay a failure with `OPERATIONS_MODEL_SEED=<seed> OPERATIONS_MODEL_SEQUENCES=1 swift test
/// --filter ModelBasedTests`; run longer with `OPERATIONS_MODEL_SEQUENCES=20000
/// OPERATIONS_MODEL_SECONDS=600`; see what the switched-off shapes find with
/// `OPERATIONS_MODEL_ALL_DEFECTS=1`, or `OPERATIONS_MODEL_DEFECTS_OFF=<switch>,…`
/// (``ModelKnownDefects``). See ``ModelEnvironment``.
@Suite struct ModelBasedTests {
    @Test(.oneExitTestAtATime) func stagedSequencesMatchTheReferenceModel() async {
        await runSequences(.staged, defaultCount: ModelEnvironment.defaultSequences.staged)
    }

    @Test(.oneExitTestAtATime) func interleavedSequencesKeepTheModelsInvariants() async {
        await runSequences(.interleaved, defaultCount: ModelEnvironment.defaultSequences.interleaved)
    }

    // MARK: The harness itself

    @Test func aSeedAlwaysMakesTheSameSequence() {
        for seed: UInt64 in [1, 42, 0xDEAD_BEEF] {
            let first = ModelGenerator.sequence(seed: seed, mode: .staged, defects: .none)
            let second = ModelGenerator.sequence(seed: seed, mode: .staged, defects: .none)
            #expect(first == second)
            #expect(!first.commands.isEmpty)
        }
        let one = ModelGenerator.sequence(seed: 1, mode: .staged, defects: .none)
        let other = ModelGenerator.sequence(seed: 2, mode: .staged, defects: .none)
        #expect(one.commands != other.commands)
    }

    @Test func theShrinkerFindsTheStepsThatMatter() async {
        var sequence = ModelGenerator.sequence(seed: 7, mode: .staged, defects: ModelKnownDefects())
        sequence.commands = [.make(900, .sync)] + sequence.commands + [.cancel(900)]
        let failure = ModelFailure(category: .outcome, details: ["op900 was cancelled"])
        let shrinker = ModelShrinker(evaluate: { candidate in
            let fails = candidate.commands.contains(.make(900, .sync)) && candidate.commands.contains(.cancel(900))
            return fails ? failure : nil
        })
        let (shrunk, found, _) = await shrinker.shrink(sequence, failing: failure)
        #expect(shrunk.commands == [.make(900, .sync), .cancel(900)])
        #expect(ModelShrinker.simplifications(of: .fan(on: 0, first: 10, count: 20, queue: 0)).contains(.fan(on: 0, first: 10, count: 16, queue: 0)))
        #expect(found == failure)
    }

    @Test func theOrderCheckFollowsPriorityThenReadiness() {
        typealias Entry = ReferenceModel.QueueState.Entry
        let member = { (priority: ModelPriority) in
            ModelOrderSnapshot.Member(priority: priority, deps: [], runs: true, effects: [], inQueueAtStart: true)
        }
        let snapshot = ModelOrderSnapshot(
            queue: 0, phase: 0,
            entries: [Entry(op: 1, priority: .normal, sequence: 1), Entry(op: 2, priority: .high, sequence: 2),
                      Entry(op: 3, priority: .normal, sequence: 3)],
            members: [1: member(.normal), 2: member(.high), 3: member(.normal)], isDeterminate: true)
        #expect(ModelOrderCheck(snapshot: snapshot, observed: [2, 1, 3]).violation() == nil)
        #expect(ModelOrderCheck(snapshot: snapshot, observed: [1, 2, 3]).violation() != nil)
        #expect(ModelOrderCheck(snapshot: snapshot, observed: [2, 3, 1]).violation() != nil)

        // Dependents made ready by one finish may start in either order; a cancelled operation
        // starts unseen, in its turn.
        var tied = snapshot
        tied.entries = [Entry(op: 1, priority: .normal, sequence: 1)]
        tied.members[2] = ModelOrderSnapshot.Member(priority: .normal, deps: [1], runs: true, effects: [], inQueueAtStart: true)
        tied.members[3] = ModelOrderSnapshot.Member(priority: .normal, deps: [1], runs: true, effects: [], inQueueAtStart: true)
        #expect(ModelOrderCheck(snapshot: tied, observed: [1, 3, 2]).violation() == nil)
        #expect(ModelOrderCheck(snapshot: tied, observed: [1, 2, 3]).violation() == nil)
        tied.members[1]!.runs = false
        #expect(ModelOrderCheck(snapshot: tied, observed: [3, 2]).violation() == nil)
        #expect(ModelOrderCheck(snapshot: tied, observed: [1, 2, 3]).violation() != nil)
    }

    /// The shape the long run found on 2026-11-25: a body adds an operation to its queue, then
    /// cancels a waiting one; the added one is on the ready list first, and the cancelled one's
    /// dependent becomes ready after the added one's.
    @Test func theOrderCheckListsWhatABodyDoesInTheOrderItDoesIt() {
        typealias Entry = ReferenceModel.QueueState.Entry
        func member(deps: [Int] = [], runs: Bool = true, effects: [ModelOrderSnapshot.Effect] = [],
                    inQueue: Bool = true) -> ModelOrderSnapshot.Member {
            ModelOrderSnapshot.Member(priority: .normal, deps: deps, runs: runs, effects: effects, inQueueAtStart: inQueue)
        }
        // 5 adds 2, then cancels 6 (which waits for 5); 4 waits for 6, 600 for 2.
        let snapshot = ModelOrderSnapshot(
            queue: 0, phase: 0, entries: [Entry(op: 5, priority: .normal, sequence: 1)],
            members: [5: member(effects: [.adds(2), .cancels(6)]), 2: member(inQueue: false),
                      6: member(deps: [5], runs: false), 4: member(deps: [6]), 600: member(deps: [2])],
            isDeterminate: true)
        #expect(ModelOrderCheck(snapshot: snapshot, observed: [5, 2, 600, 4]).violation() == nil)
        #expect(ModelOrderCheck(snapshot: snapshot, observed: [5, 2, 4, 600]).violation() != nil)

        var cancelsFirst = snapshot
        cancelsFirst.members[5] = member(effects: [.cancels(6), .adds(2)])
        #expect(ModelOrderCheck(snapshot: cancelsFirst, observed: [5, 2, 4, 600]).violation() == nil)
        #expect(ModelOrderCheck(snapshot: cancelsFirst, observed: [5, 2, 600, 4]).violation() != nil)
    }

    @Test func theModelRefusesStepsItCannotPredict() {
        var model = ReferenceModel(mode: .staged, queueWidths: [1])
        check(model.apply(.make(0, .sync)))
        check(model.apply(.make(1, .sync)))
        check(!model.apply(.make(1, .sync)), "a number is used once")
        check(model.apply(.addDependency(1, on: 0)))
        check(!model.apply(.addDependency(0, on: 1)), "a cycle")
        check(!model.apply(.addDependency(1, on: 0)), "a dependency twice")
        check(model.apply(.enqueue([1], queue: 0)))
        check(!model.apply(.enqueue([1], queue: 0)), "in a queue twice")
        check(!model.apply(.addCondition(1, .predicate(true))), "a condition after the operation joined a queue")
        check(model.apply(.make(2, .group)))
        check(!model.apply(.enqueue([2], queue: 0)), "a group in a queue of width 1")
        check(model.apply(.addCondition(0, .evaluate(true))))
        check(!model.apply(.enqueue([0], queue: 0)), "an async condition evaluated while the driver goes on")
    }

    // MARK: Running

    private func runSequences(_ mode: ModelSequence.Mode, defaultCount: Int) async {
        let seed = ModelEnvironment.seed()
        let count = ModelEnvironment.sequences ?? (ModelEnvironment.isReplay ? 1 : defaultCount)
        let seconds = ModelEnvironment.seconds
        let defects = ModelKnownDefects.active
        print("model-based test, \(mode): \(count) sequences from OPERATIONS_MODEL_SEED=\(seed); shapes left out for known defects: \(defects.enabledNames.isEmpty ? "none" : defects.enabledNames.joined(separator: ", "))")
        let statusPath = ModelBatch.temporaryPath("batch")
        defer { try? FileManager.default.removeItem(atPath: statusPath) }
        let started = ContinuousClock.now
        // The child always ends with a failing status (see `ModelBatch.exitPassed`); what happened
        // is in the status file.
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [mode = mode.rawValue as String, seed = seed as UInt64, count = count as Int,
                                                     seconds = seconds as Double, defects = defects as ModelKnownDefects,
                                                     statusPath = statusPath as String] in
            await onOwnThread {
                ModelBatch.runBatchAndExit(mode: ModelSequence.Mode(rawValue: mode)!, seed: seed, count: count, seconds: seconds,
                                           defects: defects, statusPath: statusPath)
            }
        }
        if let result {
            Self.reportSanitizerFindings(in: result, seed: seed)
        }
        guard let status = ModelBatch.read(statusPath) else {
            Issue.record("The model-based test's child process wrote no status (seed \(seed)).")
            return
        }
        let sequence: ModelSequence
        let failure: ModelFailure
        switch status.state {
        case .passed:
            let counts = status.statistics.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            let cut = status.sequencesRun < count ? " (of \(count): the \(Int(seconds)) s allowed had passed)" : ""
            print("model-based test, \(mode): \(status.sequencesRun) sequences passed\(cut) in \(ContinuousClock.now - started) (\(counts))")
            return
        case .failed:
            sequence = status.sequence!
            failure = status.failure!
        case .running:
            sequence = status.sequence!
            // The trap's message, if the child printed one, not the backtrace that follows it.
            failure = ModelFailure(category: .crash, details: ["the process stopped while it played this sequence"]
                                   + Self.trapLines(in: result?.standardErrorContent ?? []))
        }
        let repeats = failure.category == .crash || failure.category == .hang ? 1 : 3
        var environment = ""
        for name in ["OPERATIONS_MODEL_ALL_DEFECTS", "OPERATIONS_MODEL_DEFECTS_OFF"] {
            if let value = ProcessInfo.processInfo.environment[name] { environment += "\(name)=\(value) " }
        }
        let shrinker = ModelShrinker(evaluate: { candidate in await Self.evaluateInChild(candidate, repeats: repeats, defects: defects) }, defects: defects)
        // The crash's message comes from playing it again (the batch's child could not report it).
        let reproduced = await Self.evaluateInChild(sequence, repeats: repeats, defects: defects)
        let (shrunk, shrunkFailure, tries) = await shrinker.shrink(sequence, failing: reproduced ?? failure)
        Issue.record("""
            The library did not play a sequence the way the reference model allows (\(shrunkFailure.category.rawValue)).
            Seed \(sequence.seed), sequence \(status.sequencesRun) of this run. Replay:
              \(environment)OPERATIONS_MODEL_SEED=\(sequence.seed) OPERATIONS_MODEL_SEQUENCES=1 swift test --filter ModelBasedTests/\(mode == .staged ? "stagedSequencesMatchTheReferenceModel" : "interleavedSequencesKeepTheModelsInvariants")
            \(reproduced == nil ? "(It did not fail again when played once more: timing matters.)\n" : "")\
            Shortest sequence found (\(shrunk.commands.count) of \(sequence.commands.count) steps, \(tries) candidates played):
            \(shrunk)
            What went wrong:
              \(shrunkFailure)
            """)
    }

    /// A sanitizer's reports in a child process do not reach this process's output on their own:
    /// they are printed here (where CI looks for them) and recorded as an issue.
    ///
    /// Leaks alone are not: the child exits as soon as its last sequence ends, while the operations
    /// that sequence left unfinished (cancelled by the clean-up, in flight, or never started by
    /// design) are still alive, so LeakSanitizer lists them. Leaks are checked by the memory tests.
    static func reportSanitizerFindings(in result: ExitTest.Result, seed: UInt64) {
        let output = String(decoding: result.standardErrorContent, as: UTF8.self)
        let isLeakReportOnly = output.contains("ERROR: LeakSanitizer") && !output.contains("ERROR: AddressSanitizer")
            && !output.contains("ThreadSanitizer")
        if isLeakReportOnly {
            print("model-based test, seed \(seed): LeakSanitizer listed what the child left alive as it exited (not examined; see reportSanitizerFindings)")
            return
        }
        guard output.contains("ThreadSanitizer") || output.contains("AddressSanitizer") || output.contains("LeakSanitizer") else { return }
        print(output)
        Issue.record("A sanitizer reported a problem in the model-based test's child process (seed \(seed), exit status \(result.exitStatus)); the report is printed above.")
    }

    /// Plays `sequence` in a child process (up to `repeats` times); its failure, or `nil`.
    static func evaluateInChild(_ sequence: ModelSequence, repeats: Int, defects: ModelKnownDefects) async -> ModelFailure? {
        let statusPath = ModelBatch.temporaryPath("candidate")
        defer { try? FileManager.default.removeItem(atPath: statusPath) }
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            [sequence = sequence as ModelSequence, repeats = repeats as Int, defects = defects as ModelKnownDefects,
             statusPath = statusPath as String] in
            await onOwnThread {
                ModelBatch.runCandidateAndExit(sequence, repeats: repeats, defects: defects, statusPath: statusPath)
            }
        }
        guard let result else { return nil }
        switch result.exitStatus {
        case .exitCode(ModelBatch.exitPassed):
            return nil
        case .exitCode(ModelBatch.exitFailed):
            if let failure = ModelBatch.read(statusPath)?.failure { return failure }
        default:
            break
        }
        return ModelFailure(category: .crash, details: ["the process stopped: \(result.exitStatus)"] + trapLines(in: result.standardErrorContent))
    }

    /// The message of a trap in a child's standard error, not the backtrace that follows it.
    static func trapLines(in standardError: [UInt8]) -> [String] {
        let output = String(decoding: standardError, as: UTF8.self)
        let lines = output.split(separator: "\n").map(String.init).filter {
            $0.contains("Fatal error") || $0.contains("Operations:") || $0.contains("Could not cast") || $0.contains("Precondition failed")
                || $0.contains("Crash") || $0.contains("signal")
        }
        return Array(lines.prefix(4))
    }
}
