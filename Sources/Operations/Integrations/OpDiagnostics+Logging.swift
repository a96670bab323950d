#if Logging
public import Logging

extension OpDiagnostics {
    /// Routes every report to `logger` from now on, instead of standard error.
    ///
    /// Each report is logged at its ``Diagnostic/logLevel`` with the first line of its
    /// ``Diagnostic/description`` as the message and ``Diagnostic/logMetadata`` as structured
    /// metadata (the operations of a cycle and the queues' dump lines, the threads of an
    /// exhausted pool, and so on), so that a log backend can index them.
    ///
    /// ```swift
    /// OpDiagnostics.log(to: Logger(label: "app.operations"))
    /// ```
    ///
    /// Available with the package's `Logging` trait.
    public static func log(to logger: Logger) {
        handler = logHandler(for: logger)
    }

    /// A handler for ``handler`` that logs each report to `logger`, for combining with handlers
    /// of your own.
    public static func logHandler(for logger: Logger) -> @Sendable (Diagnostic) -> Void {
        { diagnostic in
            // The first line: the rest (a queue's dump) is in the metadata.
            let message = diagnostic.description.prefix { $0 != "\n" }
            logger.log(level: diagnostic.logLevel, "\(message)", metadata: diagnostic.logMetadata)
        }
    }
}

extension OpDiagnostics.Diagnostic {
    /// How serious the report is: a cycle found and left alone is a warning; work the library had
    /// to cancel, or a stalled pool, is an error.
    public var logLevel: Logger.Level {
        switch self {
        case .dependencyCycle, .synchronousWaitInTask: .warning
        case .dependencyCycleEnded, .workerPoolExhausted: .error
        }
    }

    /// The report's details as structured metadata, under keys that start with `operations.`:
    /// `operations.diagnostic` names the kind of report; `operations.cycle` lists the operations
    /// of a cycle in dependency order, and `operations.queueDump` the lines of the queues' dumps
    /// that show them (``DependencyCycleError/queueDump``); `operations.threads` and
    /// `operations.executing` say which threads of an exhausted pool are held, and by what;
    /// `operations.wait`, `operations.target` and `operations.callSite` say which synchronous wait
    /// was called inside a task, on what, and where.
    public var logMetadata: Logger.Metadata {
        switch self {
        case .dependencyCycle(let error):
            Self.metadata(of: error, diagnostic: "dependencyCycle")
        case .dependencyCycleEnded(let error):
            Self.metadata(of: error, diagnostic: "dependencyCycleEnded")
        case .workerPoolExhausted(let threads, let operations):
            ["operations.diagnostic": "workerPoolExhausted", "operations.threads": "\(threads)",
             "operations.executing": .array(operations.map { .string($0) })]
        case .synchronousWaitInTask(let wait, let target, let callSite):
            ["operations.diagnostic": "synchronousWaitInTask", "operations.wait": .string(wait),
             "operations.target": .string(target), "operations.callSite": .string(callSite)]
        }
    }

    private static func metadata(of error: DependencyCycleError, diagnostic: String) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "operations.diagnostic": .string(diagnostic),
            "operations.cycle": .array(error.operations.map { .string($0) }),
        ]
        if let queueDump = error.queueDump { metadata["operations.queueDump"] = .string(queueDump) }
        return metadata
    }
}
#endif
