import Testing
import Dispatch
@testable import Operations

/// The lanes of mutual exclusivity (`OpQueueStateMachine.Lane`): operations of one queue that
/// need the same single category wait in their queue behind the first of them, which alone asks
/// the exclusivity table. Each test blocks only a thread of its own (`onOwnThread`), never one
/// of Swift's cooperative threads, and returns what went wrong.
@Suite struct ExclusivityLanesTests {
    /// A block operation exclusive for `category` that appends `name` to `log` when it runs.
    private static func exclusive(_ category: String, _ name: String, log: EventLog<String>,
                                  meter: ConcurrencyMeter? = nil) -> BlockOp {
        let op = BlockOp {
            meter?.enter(name)
            log.append(name)
            meter?.leave(name)
        }
        op.name = name
        op.addCondition(.mutuallyExclusive(category))
        return op
    }

    /// An operation of `category` that runs on a queue of its own and holds the category until
    /// `release` is opened. Returns once it runs (`nil` on a hang).
    private static func holder(of category: String, release: Gate) -> (op: Op, queue: OpQueue)? {
        let started = Gate()
        let op = BlockOp {
            started.open()
            release.wait()
        }
        op.addCondition(.mutuallyExclusive(category))
        let queue = OpQueue()
        queue.addOperation(op)
        return started.wait() ? (op, queue) : nil
    }

    private static func waitsInTheTable(_ op: Op) -> Bool {
        op.withState { $0.gate } == .waitingForExclusivity
    }

    @Test func operationsOfOneQueueWaitBehindTheFirstOfThemNotInTheTable() async {
        let failures: [String] = await onOwnThread {
            var failures: [String] = []
            let category = uniqueToken("lanes")
            let release = Gate()
            guard let holder = Self.holder(of: category, release: release) else { return ["the holder never ran"] }
            let log = EventLog<String>()
            let meter = ConcurrencyMeter()
            let queue = OpQueue()
            let ops = (0..<5).map { Self.exclusive(category, "op\($0)", log: log, meter: meter) }
            queue.addOperations(ops, waitUntilFinished: false)
            // The first asks the table and waits there; the others wait in their queue. (Its gate
            // says so a moment before its request reaches the table.)
            if !eventually(seconds: 5, { Exclusivity.waiting(in: category).map(ObjectIdentifier.init) == [ObjectIdentifier(ops[0])] }) {
                failures.append("the table holds \(Exclusivity.waiting(in: category).count) requests of the queue, not the first one's")
            }
            if !eventually(seconds: 5, { Self.waitsInTheTable(ops[0]) && ops.dropFirst().allSatisfy(queue.isParkedInLane) }) {
                failures.append("not one asking and four parked: \(ops.map { "\(Self.waitsInTheTable($0))/\(queue.isParkedInLane($0))" })")
            }
            release.open()
            queue.waitUntilAllOperationsAreFinished()
            holder.queue.waitUntilAllOperationsAreFinished()
            if log.all != ops.map({ $0.name! }) { failures.append("ran in the order \(log.all)") }
            if meter.peak != 1 { failures.append("\(meter.peak) ran at once") }
            if queue.laneCount != 0 { failures.append("\(queue.laneCount) lanes left in the queue") }
            return failures
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func aParkedOperationThatIsCancelledFinishesAtOnce() async {
        let failures: [String] = await onOwnThread {
            var failures: [String] = []
            let category = uniqueToken("lanes")
            let release = Gate()
            guard let holder = Self.holder(of: category, release: release) else { return ["the holder never ran"] }
            let log = EventLog<String>()
            let queue = OpQueue()
            let first = Self.exclusive(category, "first", log: log)
            let parked = Self.exclusive(category, "parked", log: log)
            queue.addOperations([first, parked], waitUntilFinished: false)
            if !eventually(seconds: 5, { queue.isParkedInLane(parked) }) { failures.append("never parked") }
            parked.cancel()
            // It finishes while the holder still holds the category, without running.
            if !eventually(seconds: 5, { parked.isFinished }) { failures.append("the cancelled one did not finish") }
            if first.isFinished || !Self.waitsInTheTable(first) { failures.append("the first one no longer waits") }
            release.open()
            queue.waitUntilAllOperationsAreFinished()
            holder.queue.waitUntilAllOperationsAreFinished()
            if log.all != ["first"] { failures.append("ran \(log.all)") }
            return failures
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func aFirstOperationThatGetsADependencyLetsTheNextOneAsk() async {
        let failures: [String] = await onOwnThread {
            var failures: [String] = []
            let category = uniqueToken("lanes")
            let release = Gate()
            guard let holder = Self.holder(of: category, release: release) else { return ["the holder never ran"] }
            let log = EventLog<String>()
            let queue = OpQueue()
            let first = Self.exclusive(category, "first", log: log)
            let second = Self.exclusive(category, "second", log: log)
            queue.addOperations([first, second], waitUntilFinished: false)
            if !eventually(seconds: 5, { Self.waitsInTheTable(first) && queue.isParkedInLane(second) }) {
                failures.append("the first does not ask, or the second is not parked")
            }
            // A late dependency: the first stops asking, and the second asks in its place.
            let later = BlockOp { log.append("dependency") }
            first.addDependency(later)
            if !eventually(seconds: 5, { Self.waitsInTheTable(second) && !queue.isParkedInLane(second) }) {
                failures.append("the second never asked")
            }
            release.open()
            if !eventually(seconds: 5, { second.isFinished }) { failures.append("the second never ran") }
            if first.isFinished { failures.append("the first ran before its dependency") }
            OpQueue().addOperation(later)
            queue.waitUntilAllOperationsAreFinished()
            holder.queue.waitUntilAllOperationsAreFinished()
            if log.all != ["second", "dependency", "first"] { failures.append("ran \(log.all)") }
            return failures
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func operationsOfALaneStartInTheOrderTheirQueueStartsThem() async {
        let failures: [String] = await onOwnThread {
            var failures: [String] = []
            let category = uniqueToken("lanes")
            let release = Gate()
            guard let holder = Self.holder(of: category, release: release) else { return ["the holder never ran"] }
            let log = EventLog<String>()
            let queue = OpQueue()
            queue.isSuspended = true
            let low = Self.exclusive(category, "low", log: log)
            low.queuePriority = .low
            let normal = Self.exclusive(category, "normal", log: log)
            let high = Self.exclusive(category, "high", log: log)
            high.queuePriority = .high
            queue.addOperations([low, normal, high], waitUntilFinished: false)
            queue.isSuspended = false
            // The queue starts the highest priority first: it asks, the others park behind it.
            if !eventually(seconds: 5, { Self.waitsInTheTable(high) && queue.isParkedInLane(normal) && queue.isParkedInLane(low) }) {
                failures.append("the highest priority does not ask first")
            }
            release.open()
            queue.waitUntilAllOperationsAreFinished()
            holder.queue.waitUntilAllOperationsAreFinished()
            if log.all != ["high", "normal", "low"] { failures.append("ran in the order \(log.all)") }
            return failures
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}
