/// The size and mix of a generated stress scenario: how many operations and queues, and how often
/// each feature (cancellation, barriers, observers, children, ...) appears.
struct StressConfig: Sendable {
    /// How many operations the driver creates (children and barriers come on top).
    var operationCount: ClosedRange<Int>
    /// How many queues the operations are spread over.
    var queueCount: ClosedRange<Int> = 2...5
    /// The most dependencies an operation gets on earlier operations.
    var maximumDependencies = 3

    /// Share of each kind of operation; the rest are `Op` subclasses with a synchronous body.
    var blockShare = 0.25
    var invocationShare = 0.10
    var asyncShare = 0.30

    /// Probability that an operation is cancelled before it is added to its queue.
    var cancelBeforeAdding = 0.04
    /// Probability that an operation cancels itself, from another thread, while it executes.
    var cancelDuringExecution = 0.04
    /// Probability that an operation's observers record its isExecuting, isCancelled and isFinished.
    var observed = 0.30
    /// Probability that an operation has a completion block.
    var completionBlock = 0.40
    /// Probability that an operation's body adds a child operation to its own queue.
    var addsChild = 0.08
    /// Probability that an operation's body pauses (spins or blocks for microseconds).
    var pause = 0.30

    /// Probability of an event between two batches of additions, and the shares of the events.
    var event = 0.35
    var barrierShare = 0.15
    var suspensionShare = 0.20
    var cancelShare = 0.45
    var cancelAllShare = 0.01
    /// How many events (cancellations, suspensions, pauses) follow the last addition.
    var tailEvents = 0...12

    /// How many extra edges are added once everything is in a queue (cycle scenarios only).
    var backEdges: ClosedRange<Int> = 0...0

    /// How long a run may take before it is reported as a hang.
    var hangTimeoutSeconds = 60

    /// Whether the scenario checks dependency cycles: every queue stays suspended while the
    /// operations are added and the back edges close cycles; nothing is cancelled by the driver.
    var isCycleScenario: Bool { backEdges.upperBound > 0 }

    /// The default run of `swift test`: a few hundred operations.
    static let short = StressConfig(operationCount: 200...400)

    /// The soak: thousands of operations per round, fewer observers to keep it fast.
    static let soak = StressConfig(
        operationCount: 2_000...6_000, observed: 0.10, completionBlock: 0.25, pause: 0.10,
        tailEvents: 0...40, hangTimeoutSeconds: 120)

    /// Dependency cycles: back edges over a graph built in suspended queues.
    static let cycles = StressConfig(
        operationCount: 80...200, cancelBeforeAdding: 0, cancelDuringExecution: 0,
        event: 0.15, barrierShare: 1, suspensionShare: 0, cancelShare: 0, cancelAllShare: 0,
        tailEvents: 0...0, backEdges: 1...6)
}
