import Dispatch
import Operations

/// Control operations: delays that hold no thread, and the cost of passing values by injection.
extension Workloads {
    // MARK: 12. Delays

    /// `count` delays of `milliseconds` each, all waiting at once in one queue.
    public static func oursDelays(_ count: Int, milliseconds: Int) {
        let queue = OpQueue()
        let delays = (0..<count).map { _ in DelayOp(for: .milliseconds(milliseconds)) }
        queue.addOperations(delays, waitUntilFinished: true)
    }

    /// The same waits as Dispatch timers (`asyncAfter`) counted by a group.
    public static func dispatchDelays(_ count: Int, milliseconds: Int) {
        let group = DispatchGroup()
        for _ in 0..<count {
            group.enter()
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { group.leave() }
        }
        group.wait()
    }

    /// The same waits as `Task.sleep` in a task group.
    public static func taskGroupDelays(_ count: Int, milliseconds: Int) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
                group.addTask { try? await Task.sleep(for: .milliseconds(milliseconds)) }
            }
        }
    }

    // MARK: 13. Injection

    /// `pairs` producers, each injecting its value into a consumer.
    public static func oursInjected(_ pairs: Int) {
        let queue = OpQueue()
        var all: [Op] = []
        all.reserveCapacity(pairs * 2)
        for index in 0..<pairs {
            let producer = ResultOp { index }
            let consumer = BlockOp {}
            consumer.inject(from: producer) { _, value in precondition(value == index) }
            all += [producer, consumer]
        }
        queue.addOperations(all, waitUntilFinished: false)
        queue.waitUntilAllOperationsAreFinished()
    }

    /// The same pairs with a plain dependency and no value passed.
    public static func oursDependentPairs(_ pairs: Int) {
        let queue = OpQueue()
        var all: [Op] = []
        all.reserveCapacity(pairs * 2)
        for _ in 0..<pairs {
            let producer = BlockOp {}
            let consumer = BlockOp {}
            consumer.addDependency(producer)
            all += [producer, consumer]
        }
        queue.addOperations(all, waitUntilFinished: false)
        queue.waitUntilAllOperationsAreFinished()
    }
}

/// Seeing inside: the cost of recording a trace.
extension Workloads {
    // MARK: 14. Tracing

    /// `count` independent empty operations, recorded by an ``OpTrace``, whose Chrome trace JSON
    /// and summary are then made.
    public static func oursTraced(_ count: Int) {
        let queue = OpQueue()
        let operations = (0..<count).map { _ in BlockOp {} }
        let trace = OpTrace.record {
            queue.addOperations(operations, waitUntilFinished: true)
        }
        precondition(trace.operations.count >= count)
        precondition(!trace.chromeTraceJSON.isEmpty && !trace.summary.isEmpty)
    }

    /// The same operations, not recorded.
    public static func oursUntraced(_ count: Int) {
        let queue = OpQueue()
        let operations = (0..<count).map { _ in BlockOp {} }
        queue.addOperations(operations, waitUntilFinished: true)
    }
}
