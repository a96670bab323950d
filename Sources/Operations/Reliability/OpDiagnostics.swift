#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the library reports problems it detected and handled, such as dependency cycles.
///
/// By default every report is written to standard error. Install your own handler to route the
/// reports to your logging system:
///
/// ```swift
/// OpDiagnostics.handler = { diagnostic in logger.error("\(diagnostic)") }
/// ```
public enum OpDiagnostics {
    /// One report.
    public enum Diagnostic: Sendable, CustomStringConvertible {
        /// A dependency cycle was found and its operations were ended with the error.
        case dependencyCycle(DependencyCycleError)

        /// A line describing the report.
        public var description: String {
            switch self {
            case .dependencyCycle(let error):
                "Operations: \(error)"
            }
        }
    }

    private static let storedHandler = LockedBox<@Sendable (Diagnostic) -> Void>(OpDiagnostics.writeToStandardError)

    /// Receives every report, on the thread that detected the problem, outside the library's locks.
    public static var handler: @Sendable (Diagnostic) -> Void {
        get { storedHandler.withLockedValue { $0 } }
        set {
            let old = storedHandler.withLockedValue { handler in
                defer { handler = newValue }
                return handler
            }
            withExtendedLifetime(old) {}   // released outside the lock
        }
    }

    /// The default handler: writes the report to standard error.
    public static let writeToStandardError: @Sendable (Diagnostic) -> Void = { diagnostic in
        var line = "\(diagnostic)\n"
        line.withUTF8 { bytes in
            _ = write(2, bytes.baseAddress, bytes.count)
        }
    }

    static func report(_ diagnostic: Diagnostic) {
        handler(diagnostic)
    }
}
