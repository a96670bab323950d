import Testing
import Dispatch
import Synchronization
@testable import Operations

/// A one-shot signal with a generous timeout that only guards against a hang.
final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    init() {}

    /// Opens the gate for one waiter.
    func open() { semaphore.signal() }

    /// Waits until the gate is opened; returns `false` on timeout (a hang in the code under test).
    ///
    /// The default is long: a body that holds a gate to keep its operation running must still be
    /// running when the test looks, even when the whole suite runs under a sanitizer on two cores.
    @discardableResult
    func wait(seconds: Int = 60) -> Bool {
        semaphore.wait(timeout: .now() + .seconds(seconds)) == .success
    }
}

/// A thread-safe list of events, to check order.
final class EventLog<Event: Sendable>: Sendable {
    private let events = LockedBox<[Event]>([])

    init() {}

    func append(_ event: Event) { events.withLockedValue { $0.append(event) } }

    var all: [Event] { events.withLockedValue { $0 } }

    var count: Int { events.withLockedValue { $0.count } }
}

/// A thread-safe counter that also tracks its highest value (for concurrency limits).
final class ConcurrencyMeter: Sendable {
    private let state = LockedBox((current: 0, peak: 0, total: 0, inside: [String](), overlaps: [String]()))

    init() {}

    /// Counts one more inside; `who`, if given, names it in ``overlaps``.
    func enter(_ who: String? = nil) {
        state.withLockedValue {
            $0.current += 1
            $0.total += 1
            $0.peak = max($0.peak, $0.current)
            if let who {
                if !$0.inside.isEmpty && $0.overlaps.count < 10 {
                    $0.overlaps.append("\(who) entered while \($0.inside) were inside")
                }
                $0.inside.append(who)
            }
        }
    }

    func leave(_ who: String? = nil) {
        state.withLockedValue {
            $0.current -= 1
            if let who, let index = $0.inside.firstIndex(of: who) { $0.inside.remove(at: index) }
        }
    }

    /// The overlaps of named entries seen (the first ten).
    var overlaps: [String] { state.withLockedValue { $0.overlaps } }

    var peak: Int { state.withLockedValue { $0.peak } }
    var total: Int { state.withLockedValue { $0.total } }
}

/// Blocks the calling thread for `milliseconds` (simulated blocking work).
func blockThread(milliseconds: Int) {
    _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(milliseconds))
}

/// Waits until `condition` holds, polling; returns `false` after `seconds` (a hang guard).
@discardableResult
func eventually(seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
    while !condition() {
        if DispatchTime.now().uptimeNanoseconds > deadline { return false }
        blockThread(milliseconds: 1)
    }
    return true
}

/// `eventually` for `async` tests: polls `condition` (which may be `async`) without blocking a
/// thread, suspending between polls; returns `false` after `seconds` (a hang guard, generous:
/// while other tests hold the cooperative pool's threads, a task may wait seconds to start).
@discardableResult
func eventuallyAsync(seconds: Double = 30, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while !(await condition()) {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

extension Gate {
    /// Waits for the gate on a thread of its own (a new serial queue), so that no thread of the
    /// cooperative pool, nor of Dispatch's global queues (which do not grow on Linux while their
    /// threads block), is held; returns `false` after `seconds` (a hang guard).
    @discardableResult
    func waitOffThread(seconds: Int = 60) async -> Bool {
        await withCheckedContinuation { continuation in
            DispatchQueue(label: "gate-wait").async {
                continuation.resume(returning: self.wait(seconds: seconds))
            }
        }
    }
}

/// Records when `operation` finished, in its completion block (which runs as soon as the
/// operation finished), so that a measured time does not include the delay in resuming an
/// awaiting test task, which can be long while other tests hold the cooperative pool's threads.
func finishTimes(of operation: Op) -> EventLog<ContinuousClock.Instant> {
    let times = EventLog<ContinuousClock.Instant>()
    operation.completionBlock = { times.append(.now) }
    return times
}

/// An operation subclass that records when its body runs.
final class RecordingOp: Op, @unchecked Sendable {
    // @unchecked Sendable: `body` is immutable.
    let body: @Sendable (RecordingOp) -> Void

    init(name: String? = nil, _ body: @escaping @Sendable (RecordingOp) -> Void = { _ in }) {
        self.body = body
        super.init()
        self.name = name
    }

    override func main() { body(self) }
}

/// `#expect` for conditions that call mutating methods (a state machine's events), which the
/// macro cannot capture: the condition is evaluated before the call.
func check(_ condition: Bool, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(condition, comment, sourceLocation: sourceLocation)
}

/// Collects every diagnostic the library reports during the test run. It is installed once and
/// never removed, so suites running in parallel do not swap the global handler under each other;
/// each test picks out the reports about its own operations by a unique name prefix.
final class DiagnosticsRecorder: Sendable {
    static let shared: DiagnosticsRecorder = {
        let recorder = DiagnosticsRecorder()
        OpDiagnostics.handler = { recorder.diagnostics.append($0) }
        return recorder
    }()

    private let diagnostics = EventLog<OpDiagnostics.Diagnostic>()

    private init() {}

    /// The reports (as their descriptions) that mention `token`.
    func reports(mentioning token: String) -> [String] {
        diagnostics.all.map(\.description).filter { $0.contains(token) }
    }

    /// The cycles reported found whose operations mention `token`.
    func cyclesFound(mentioning token: String) -> [DependencyCycleError] {
        diagnostics.all.compactMap { diagnostic in
            guard case .dependencyCycle(let error) = diagnostic, error.description.contains(token) else { return nil }
            return error
        }
    }

    /// The cycles reported ended whose operations mention `token`.
    func cyclesEnded(mentioning token: String) -> [DependencyCycleError] {
        diagnostics.all.compactMap { diagnostic in
            guard case .dependencyCycleEnded(let error) = diagnostic, error.description.contains(token) else { return nil }
            return error
        }
    }
}

/// A prefix for operation names that no other test uses.
func uniqueToken(_ label: String = "t") -> String {
    "\(label)\(UInt64.random(in: 0..<UInt64.max))"
}

/// Waits on another thread for `queue` to empty; returns `false` if it did not within the hang
/// guard (the queue is stuck).
func queueEmpties(_ queue: OpQueue, seconds: Int = 10) -> Bool {
    let done = Gate()
    DispatchQueue.global().async {
        queue.waitUntilAllOperationsAreFinished()
        done.open()
    }
    return done.wait(seconds: seconds)
}

/// An operation whose description reads its queue (takes the queue's lock): messages and dumps
/// must call `description` with no lock of the library held.
final class QueueDescribingOp: Op, @unchecked Sendable {
    // @unchecked Sendable: `queue` is immutable.
    let queue: OpQueue
    init(queue: OpQueue) {
        self.queue = queue
        super.init()
    }
    override var description: String {
        "an operation of a queue holding \(queue.operationCount)"
    }
}

/// Whether `op` waits for its exclusivity categories or permits: its request waits in the table,
/// or it is parked in its queue's lane behind an operation of its queue that asks for or holds its
/// category (see `OpQueueStateMachine.Lane`).
///
/// The request itself, not the operation's gate: the gate says "waiting" as its queue starts it,
/// a moment before the request reaches the table, and a test that moves on at the gate can see
/// a later operation ask first.
func waitsForItsCategory(_ op: Op) -> Bool {
    if Exclusivity.blockers(of: op) != nil { return true }
    if op.withState({ $0.gate }) == .waitingForExclusivity && Exclusivity.hasCountedRequest(op) { return true }
    return op.withState { $0.queue }?.isParkedInLane(op) ?? false
}
