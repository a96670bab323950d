#if Logging
import Logging
@testable import Operations
import Testing

/// A log handler that keeps what it is given.
private struct CapturingLogHandler: LogHandler {
    struct Entry: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: Logger.Metadata
    }

    let entries: EventLog<Entry>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        entries.append(Entry(level: event.level, message: "\(event.message)", metadata: event.metadata ?? [:]))
    }
}

@Suite("OpDiagnostics logging (Logging trait)")
struct OpDiagnosticsLoggingTests {
    private func capturingLogger() -> (Logger, EventLog<CapturingLogHandler.Entry>) {
        let entries = EventLog<CapturingLogHandler.Entry>()
        return (Logger(label: "operations.test") { _ in CapturingLogHandler(entries: entries) }, entries)
    }

    @Test func aCycleIsLoggedAsAWarningWithItsOperations() throws {
        let (logger, entries) = capturingLogger()
        let error = DependencyCycleError(operations: ["BlockOp \"a\"", "BlockOp \"b\""])
        OpDiagnostics.logHandler(for: logger)(.dependencyCycle(error))
        let entry = try #require(entries.all.first)
        #expect(entry.level == .warning)
        #expect(entry.message.hasPrefix("Operations: dependency cycle found"))
        #expect(entry.metadata["operations.diagnostic"] == "dependencyCycle")
        #expect(entry.metadata["operations.cycle"] == .array(["BlockOp \"a\"", "BlockOp \"b\""]))
    }

    @Test func theMessageIsTheFirstLineAndTheDumpIsMetadata() throws {
        let (logger, entries) = capturingLogger()
        let error = DependencyCycleError(operations: ["x"]).withQueueDump("OpQueue \"q\" (…)")
        OpDiagnostics.logHandler(for: logger)(.dependencyCycleEnded(error))
        let entry = try #require(entries.all.first)
        #expect(!entry.message.contains("\n") && !entry.message.contains("OpQueue \"q\""))
        #expect(entry.metadata["operations.queueDump"] == "OpQueue \"q\" (…)")
    }

    @Test func aCyclesQueueDumpIsMetadataToo() {
        let error = DependencyCycleError(operations: ["x"]).withQueueDump("OpQueue \"q\" (…)")
        #expect(OpDiagnostics.Diagnostic.dependencyCycle(error).logMetadata["operations.queueDump"] == "OpQueue \"q\" (…)")
        #expect(OpDiagnostics.Diagnostic.dependencyCycle(DependencyCycleError(operations: ["x"])).logMetadata["operations.queueDump"] == nil)
    }

    @Test func everyKindOfReportHasALevelAndMetadata() {
        let error = DependencyCycleError(operations: ["x"])
        #expect(OpDiagnostics.Diagnostic.dependencyCycleEnded(error).logLevel == .error)
        #expect(OpDiagnostics.Diagnostic.dependencyCycleEnded(error).logMetadata["operations.diagnostic"] == "dependencyCycleEnded")
        let exhausted = OpDiagnostics.Diagnostic.workerPoolExhausted(threads: 64, operations: ["BlockOp \"slow\""])
        #expect(exhausted.logLevel == .error)
        #expect(exhausted.logMetadata["operations.threads"] == "64")
        #expect(exhausted.logMetadata["operations.executing"] == .array(["BlockOp \"slow\""]))
    }

    @Test func aRealCycleReachesTheLogger() throws {
        let (logger, entries) = capturingLogger()
        // The shared recorder is installed first: installed after `previous` was read, it would be
        // replaced by this handler and then, at the end, by the one before it, and every other
        // test's reports would be lost from then on.
        _ = DiagnosticsRecorder.shared
        let previous = OpDiagnostics.handler
        let token = uniqueToken("logged")
        // Other tests' reports pass through to the handler that was installed before.
        OpDiagnostics.handler = { diagnostic in
            if diagnostic.description.contains(token) {
                OpDiagnostics.logHandler(for: logger)(diagnostic)
            } else {
                previous(diagnostic)
            }
        }
        defer { OpDiagnostics.handler = previous }
        let a = BlockOp {}
        a.name = "\(token) a"
        let b = BlockOp {}
        b.name = "\(token) b"
        a.addDependency(b)
        b.addDependency(a)
        #expect(eventually { !entries.all.isEmpty })
        let entry = try #require(entries.all.first)
        #expect(entry.metadata["operations.diagnostic"] == "dependencyCycle")
        guard case .array(let cycle)? = entry.metadata["operations.cycle"] else {
            Issue.record("no cycle in \(entry.metadata)")
            return
        }
        #expect(Set(cycle.map { "\($0)" }) == ["BlockOp \"\(token) a\"", "BlockOp \"\(token) b\""])
        b.removeDependency(a)
    }
}
#endif
