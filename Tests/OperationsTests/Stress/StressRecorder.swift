import Dispatch
import Synchronization
@testable import Operations

/// Records what happens during a stress run, stamped with one global sequence counter, for
/// ``InvariantChecker`` to check afterwards.
///
/// Every stamp comes from one sequentially consistent counter, so stamps are totally ordered and
/// consistent with happens-before: a stamp taken before an action that causes another is smaller
/// than any stamp taken after that other action. Each operation has its own lock, so that the
/// recorder does not serialize the threads it watches.
final class StressRecorder: Sendable {
    /// What was recorded about one operation.
    struct Record: Sendable {
        var created = false
        /// Taken after the `addOperations` call that added it returned.
        var addStamp: UInt64?
        /// The barrier added to the same queue most recently before it, if any.
        var barrierBefore: Int?
        /// Body starts and ends (one per block for a `BlockOp`; the end of an `AsyncOp` is taken
        /// just before it calls `finish()`).
        var bodyStarts: [UInt64] = []
        var bodyEnds: [UInt64] = []
        var observed: [Observed] = []
        var completionStarts: [UInt64] = []
        var completionEnds: [UInt64] = []
        /// Taken when the operation was finished for good (a waiter registered with `onCompletion`).
        var leftStamps: [UInt64] = []
        /// The earliest stamp taken before something that may have cancelled it.
        var cancelEvidence: UInt64?
        /// Its state when it was finished for good.
        var final: Final?

        var ran: Bool { !bodyStarts.isEmpty }
        var start: UInt64? { bodyStarts.min() }
        var end: UInt64? { bodyEnds.max() }
    }

    /// A change delivered to one of the operation's observers.
    struct Observed: Sendable, Equatable, CustomStringConvertible {
        enum Property: String, Sendable { case isExecuting, isCancelled, isFinished }
        var property: Property
        var old: Bool?
        var new: Bool?

        var description: String { "\(property.rawValue) \(old.map(String.init) ?? "nil")→\(new.map(String.init) ?? "nil")" }
    }

    /// The operation's state when it was finished for good.
    struct Final: Sendable {
        var isFinished: Bool
        var isCancelled: Bool
        var isExecuting: Bool
        /// The `DependencyCycleError` it was ended with, if any.
        var cycleError: DependencyCycleError?
        var hasOtherError: Bool
        /// `InvocationOp<Int>.result` when it returned a value.
        var invocationResult: Int?
    }

    /// One operation's record and counters.
    final class Trace: Sendable {
        let record = LockedBox(Record())
        /// Blocks of a `BlockOp` running now: the operation is in flight while this is not zero.
        /// Changed only with `record`'s lock held, so that two blocks never count it twice.
        let activeBlocks = Atomic<Int>(0)
        /// Set by whoever registers the waiter that records the end (barriers have two candidates).
        let isRegistered = Atomic<Bool>(false)

        func update(_ body: (inout Record) -> Void) {
            record.withLockedValue(body)
        }
    }

    /// One queue's counters.
    final class QueueTrace: Sendable {
        let width: Int
        /// Operations whose body is running now (a measurement never above the queue's own count).
        let inFlight = Atomic<Int>(0)
        let peak = Atomic<Int>(0)
        /// Held around every addition to the queue (and `cancelAllOperations`), so that the order
        /// of additions is known exactly.
        let additionLock = Lock()
        /// The nodes in the order they were added; touched only with `additionLock` held.
        let additions = LockedBox<(order: [Int], lastBarrier: Int?)>(([], nil))

        init(width: Int) {
            self.width = width
        }

        func enter() {
            let current = inFlight.add(1, ordering: .sequentiallyConsistent).newValue
            var observedPeak = peak.load(ordering: .relaxed)
            while current > observedPeak {
                let (exchanged, original) = peak.compareExchange(
                    expected: observedPeak, desired: current, ordering: .relaxed)
                if exchanged { break }
                observedPeak = original
            }
        }

        func leave() {
            inFlight.subtract(1, ordering: .sequentiallyConsistent)
        }
    }

    let traces: [Trace]
    let queues: [QueueTrace]
    private let clock = Atomic<UInt64>(0)
    /// Threads inside the scenario's own code (bodies, blocks, completion blocks, observers,
    /// finishers): zero once nothing is left running or blocked.
    let activeCallbacks = Atomic<Int>(0)
    /// Violations seen while running (checks made inside bodies).
    let violations = LockedBox<[String]>([])

    init(nodeCount: Int, widths: [Int]) {
        traces = (0..<nodeCount).map { _ in Trace() }
        queues = widths.map(QueueTrace.init)
    }

    /// The next stamp. Sequentially consistent: the stamps order every recorded event.
    func stamp() -> UInt64 {
        clock.add(1, ordering: .sequentiallyConsistent).newValue
    }

    func update(_ node: Int, _ body: (inout Record) -> Void) {
        traces[node].update(body)
    }

    func violation(_ text: String) {
        violations.withLockedValue { $0.append(text) }
    }

    /// Records that something that may cancel `node` is about to happen.
    func noteCancellation(of node: Int, at stamp: UInt64) {
        update(node) { $0.cancelEvidence = min($0.cancelEvidence ?? stamp, stamp) }
    }

    /// Runs `body` counted as scenario code on the calling thread.
    func callback<Result>(_ body: () -> Result) -> Result {
        activeCallbacks.add(1, ordering: .relaxed)
        defer { activeCallbacks.subtract(1, ordering: .releasing) }
        return body()
    }

    /// A snapshot of every record, for the checker.
    var records: [Record] {
        traces.map { $0.record.withLockedValue { $0 } }
    }
}
