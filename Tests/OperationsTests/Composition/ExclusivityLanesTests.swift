import Testing
import Dispatch
@testable import Operations

/// The lanes of mutual exclusivity (`OpQueueStateMachine.Lane`): operations of one queue that
/// need the same single category wait in their queue behind the first of them, which alone asks
/// the exclusivity table. Each test blocks only a thread of its own (`onOwnThread`), never one
/// of Swift's cooperative threads, and returns what went wrong.
@Suite struct ExclusivityLanesTests {
    /// One test's setting: a category held by an operation on a queue of its own, the queue
    /// under test, and a log of the bodies that ran.
    private struct Scene: Sendable {
        let category = uniqueToken("lanes")
        let log = EventLog<String>()
        let queue = OpQueue()
        private let release = Gate()
        private let holderQueue = OpQueue()

        /// Starts the holder; `false` if it never ran.
        fileprivate func startHolder() -> Bool {
            let started = Gate()
            let holder = BlockOp { [release] in
                started.open()
                release.wait()
            }
            holder.addCondition(.mutuallyExclusive(category))
            holderQueue.addOperation(holder)
            return started.wait()
        }

        /// A block operation exclusive for the category that appends `name` to the log when it
        /// runs (and enters `meter` meanwhile).
        func exclusive(_ name: String, meter: ConcurrencyMeter? = nil) -> BlockOp {
            let op = BlockOp { [log] in
                meter?.enter(name)
                log.append(name)
                meter?.leave(name)
            }
            op.name = name
            op.addCondition(.mutuallyExclusive(category))
            return op
        }

        /// The holder gives the category back.
        func releaseHolder() {
            release.open()
        }

        /// Waits until both queues are empty.
        func drain() {
            queue.waitUntilAllOperationsAreFinished()
            holderQueue.waitUntilAllOperationsAreFinished()
        }
    }

    /// Runs `body` on a thread of its own with the category held; returns what went wrong.
    private static func withAHeldCategory(_ body: @escaping @Sendable (Scene) -> [String]) async -> [String] {
        await onOwnThread {
            let scene = Scene()
            guard scene.startHolder() else { return ["the holder never ran"] }
            return body(scene)
        }
    }

    private static func waitsInTheTable(_ op: Op) -> Bool {
        op.withState { $0.gate } == .waitingForExclusivity
    }

    @Test func operationsOfOneQueueWaitBehindTheFirstOfThemNotInTheTable() async {
        let failures = await Self.withAHeldCategory { scene in
            var failures: [String] = []
            let (category, queue) = (scene.category, scene.queue)
            let meter = ConcurrencyMeter()
            let ops = (0..<5).map { scene.exclusive("op\($0)", meter: meter) }
            queue.addOperations(ops, waitUntilFinished: false)
            // The first asks the table and waits there; the others wait in their queue. (Its gate
            // says so a moment before its request reaches the table.)
            if !eventually(seconds: 5, { Exclusivity.waiting(in: category).map(ObjectIdentifier.init) == [ObjectIdentifier(ops[0])] }) {
                failures.append("the table holds \(Exclusivity.waiting(in: category).count) requests of the queue, not the first one's")
            }
            if !eventually(seconds: 5, { Self.waitsInTheTable(ops[0]) && ops.dropFirst().allSatisfy(queue.isParkedInLane) }) {
                failures.append("not one asking and four parked: \(ops.map { "\(Self.waitsInTheTable($0))/\(queue.isParkedInLane($0))" })")
            }
            scene.releaseHolder()
            scene.drain()
            if scene.log.all != ops.map({ $0.name! }) { failures.append("ran in the order \(scene.log.all)") }
            if meter.peak != 1 { failures.append("\(meter.peak) ran at once") }
            if queue.laneCount != 0 { failures.append("\(queue.laneCount) lanes left in the queue") }
            return failures
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func aParkedOperationThatIsCancelledFinishesAtOnce() async {
        let failures = await Self.withAHeldCategory { scene in
            var failures: [String] = []
            let first = scene.exclusive("first")
            let parked = scene.exclusive("parked")
            scene.queue.addOperations([first, parked], waitUntilFinished: false)
            if !eventually(seconds: 5, { scene.queue.isParkedInLane(parked) }) { failures.append("never parked") }
            parked.cancel()
            // It finishes while the holder still holds the category, without running.
            if !eventually(seconds: 5, { parked.isFinished }) { failures.append("the cancelled one did not finish") }
            if first.isFinished || !Self.waitsInTheTable(first) { failures.append("the first one no longer waits") }
            scene.releaseHolder()
            scene.drain()
            if scene.log.all != ["first"] { failures.append("ran \(scene.log.all)") }
            return failures
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func aFirstOperationThatGetsADependencyLetsTheNextOneAsk() async {
        let failures = await Self.withAHeldCategory { scene in
            var failures: [String] = []
            let first = scene.exclusive("first")
            let second = scene.exclusive("second")
            scene.queue.addOperations([first, second], waitUntilFinished: false)
            if !eventually(seconds: 5, { Self.waitsInTheTable(first) && scene.queue.isParkedInLane(second) }) {
                failures.append("the first does not ask, or the second is not parked")
            }
            // A late dependency: the first stops asking, and the second asks in its place.
            let later = BlockOp { scene.log.append("dependency") }
            first.addDependency(later)
            if !eventually(seconds: 5, { Self.waitsInTheTable(second) && !scene.queue.isParkedInLane(second) }) {
                failures.append("the second never asked")
            }
            scene.releaseHolder()
            if !eventually(seconds: 5, { second.isFinished }) { failures.append("the second never ran") }
            if first.isFinished { failures.append("the first ran before its dependency") }
            OpQueue().addOperation(later)
            scene.drain()
            if scene.log.all != ["second", "dependency", "first"] { failures.append("ran \(scene.log.all)") }
            return failures
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func operationsOfALaneStartInTheOrderTheirQueueStartsThem() async {
        let failures = await Self.withAHeldCategory { scene in
            var failures: [String] = []
            let queue = scene.queue
            queue.isSuspended = true
            let low = scene.exclusive("low")
            low.queuePriority = .low
            let normal = scene.exclusive("normal")
            let high = scene.exclusive("high")
            high.queuePriority = .high
            queue.addOperations([low, normal, high], waitUntilFinished: false)
            queue.isSuspended = false
            // The queue starts the highest priority first: it asks, the others park behind it.
            if !eventually(seconds: 5, { Self.waitsInTheTable(high) && queue.isParkedInLane(normal) && queue.isParkedInLane(low) }) {
                failures.append("the highest priority does not ask first")
            }
            scene.releaseHolder()
            scene.drain()
            if scene.log.all != ["high", "normal", "low"] { failures.append("ran in the order \(scene.log.all)") }
            return failures
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}
