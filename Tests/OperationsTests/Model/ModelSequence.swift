/// A sequence of public API calls, with the queues it uses: what the generator makes, the
/// reference model predicts, the runner plays against the library and the shrinker shortens.
struct ModelSequence: Codable, Hashable, Sendable, CustomStringConvertible {
    /// How the steps meet the running queues.
    enum Mode: String, Codable, Sendable {
        /// Every queue is suspended while the steps run, except in ``ModelCommand/runUntilQuiet``
        /// and at the end: the model predicts every outcome and, on queues of width 1, the orders
        /// it allows.
        case staged
        /// The queues run while the steps are made: the model checks the invariants that hold
        /// whatever the timing (dependency order, exclusivity, conservation, callbacks once each).
        case interleaved
    }

    var mode: Mode
    /// `maxConcurrentOperationCount` of each queue (`-1` is the default width).
    var queueWidths: [Int]
    var commands: [ModelCommand]
    /// The seed it was generated from (0 when it was written by hand).
    var seed: UInt64 = 0

    /// The sequence as Swift-like steps, numbered.
    var description: String {
        var lines = ["// \(mode) sequence, seed \(seed)"]
        for (index, width) in queueWidths.enumerated() {
            let suspended = mode == .staged ? "; queues[\(index)].isSuspended = true" : ""
            lines.append("queues[\(index)] = OpQueue(); queues[\(index)].maxConcurrentOperationCount = \(width)\(suspended)")
        }
        for (index, command) in commands.enumerated() {
            lines.append("/* \(index + 1) */ \(command.swift)")
        }
        if mode == .staged {
            lines.append("// then: resume the queues (those kept suspended last) and wait for everything")
        } else {
            lines.append("// then: resume every queue and wait for everything")
        }
        return lines.joined(separator: "\n")
    }
}
