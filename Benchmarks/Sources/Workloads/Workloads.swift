import Dispatch
import Foundation
import Operations

/// The benchmark workloads, each written once for our library and once for each peer that fits.
public enum Workloads {
    // MARK: 1. Independent empty operations on a default queue

    public static func oursIndependent(_ count: Int) {
        let queue = OpQueue()
        for _ in 0..<count { queue.addOperation {} }
        queue.waitUntilAllOperationsAreFinished()
    }

    public static func foundationIndependent(_ count: Int) {
        let queue = OperationQueue()
        for _ in 0..<count { queue.addOperation {} }
        queue.waitUntilAllOperationsAreFinished()
    }

    public static func dispatchIndependent(_ count: Int) {
        let group = DispatchGroup()
        let queue = DispatchQueue.global()
        for _ in 0..<count { queue.async(group: group) {} }
        group.wait()
    }

    public static func taskGroupIndependent(_ count: Int) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<count { group.addTask {} }
        }
    }

    // MARK: 2. Width-1 queue

    public static func oursSerial(_ count: Int) {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        for _ in 0..<count { queue.addOperation {} }
        queue.waitUntilAllOperationsAreFinished()
    }

    public static func foundationSerial(_ count: Int) {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        for _ in 0..<count { queue.addOperation {} }
        queue.waitUntilAllOperationsAreFinished()
    }

    public static func dispatchSerial(_ count: Int) {
        let queue = DispatchQueue(label: "serial")
        let group = DispatchGroup()
        for _ in 0..<count { queue.async(group: group) {} }
        group.wait()
    }

    // MARK: 3. Dependency chain

    public static func oursChain(_ count: Int) {
        var ops: [Op] = []
        ops.reserveCapacity(count)
        for index in 0..<count {
            let op = BlockOp {}
            if index > 0 { op.addDependency(ops[index - 1]) }
            ops.append(op)
        }
        let queue = OpQueue()
        queue.addOperations(ops, waitUntilFinished: false)
        queue.waitUntilAllOperationsAreFinished()
    }

    public static func foundationChain(_ count: Int) {
        var ops: [Operation] = []
        ops.reserveCapacity(count)
        for index in 0..<count {
            let op = BlockOperation {}
            if index > 0 { op.addDependency(ops[index - 1]) }
            ops.append(op)
        }
        let queue = OperationQueue()
        queue.addOperations(ops, waitUntilFinished: false)
        queue.waitUntilAllOperationsAreFinished()
    }

    // MARK: 4. Fan-in: one operation depending on many

    public static func oursFanIn(_ count: Int) {
        let sink = BlockOp {}
        var ops: [Op] = []
        ops.reserveCapacity(count + 1)
        for _ in 0..<count {
            let op = BlockOp {}
            sink.addDependency(op)
            ops.append(op)
        }
        ops.append(sink)
        let queue = OpQueue()
        queue.addOperations(ops, waitUntilFinished: false)
        queue.waitUntilAllOperationsAreFinished()
    }

    public static func foundationFanIn(_ count: Int) {
        let sink = BlockOperation {}
        var ops: [Operation] = []
        ops.reserveCapacity(count + 1)
        for _ in 0..<count {
            let op = BlockOperation {}
            sink.addDependency(op)
            ops.append(op)
        }
        ops.append(sink)
        let queue = OperationQueue()
        queue.addOperations(ops, waitUntilFinished: false)
        queue.waitUntilAllOperationsAreFinished()
    }

    // MARK: 5. Random DAG

    /// `count` operations, each depending on `averageDependencies` earlier ones on average
    /// (seeded, so every run builds the same graph).
    public static func oursRandomDAG(_ count: Int, averageDependencies: Int = 4) {
        var random = SplitMix64(seed: 42)
        var ops: [Op] = []
        ops.reserveCapacity(count)
        for index in 0..<count {
            let op = BlockOp {}
            if index > 0 {
                let dependencies = Int(random.next() % UInt64(averageDependencies * 2 + 1))
                for _ in 0..<dependencies {
                    op.addDependency(ops[Int(random.next() % UInt64(index))])
                }
            }
            ops.append(op)
        }
        let queue = OpQueue()
        queue.addOperations(ops, waitUntilFinished: false)
        queue.waitUntilAllOperationsAreFinished()
    }

    // MARK: 6. Operations that block

    public static func oursBlocking(_ count: Int, milliseconds: Int) {
        let queue = OpQueue()
        for _ in 0..<count { queue.addOperation { usleep(UInt32(milliseconds * 1000)) } }
        queue.waitUntilAllOperationsAreFinished()
    }

    public static func foundationBlocking(_ count: Int, milliseconds: Int) {
        let queue = OperationQueue()
        for _ in 0..<count { queue.addOperation { usleep(UInt32(milliseconds * 1000)) } }
        queue.waitUntilAllOperationsAreFinished()
    }

    public static func dispatchBlocking(_ count: Int, milliseconds: Int) {
        let group = DispatchGroup()
        for _ in 0..<count {
            DispatchQueue.global().async(group: group) { usleep(UInt32(milliseconds * 1000)) }
        }
        group.wait()
    }

    public static func taskGroupBlocking(_ count: Int, milliseconds: Int) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<count { group.addTask { usleep(UInt32(milliseconds * 1000)) } }
        }
    }

    // MARK: 7. A block operation with several blocking blocks

    public static func oursBlockOp(blocks: Int, milliseconds: Int) {
        let op = BlockOp()
        for _ in 0..<blocks { op.addExecutionBlock { usleep(UInt32(milliseconds * 1000)) } }
        let queue = OpQueue()
        queue.addOperation(op)
        queue.waitUntilAllOperationsAreFinished()
    }

    public static func foundationBlockOp(blocks: Int, milliseconds: Int) {
        let op = BlockOperation()
        for _ in 0..<blocks { op.addExecutionBlock { usleep(UInt32(milliseconds * 1000)) } }
        let queue = OperationQueue()
        queue.addOperation(op)
        queue.waitUntilAllOperationsAreFinished()
    }

    // MARK: 8. Pending operations (memory)

    /// Adds `count` operations to a suspended queue and returns it (keeping them pending).
    public static func oursPending(_ count: Int) -> OpQueue {
        let queue = OpQueue()
        queue.isSuspended = true
        for _ in 0..<count { queue.addOperation {} }
        return queue
    }

    public static func foundationPending(_ count: Int) -> OperationQueue {
        let queue = OperationQueue()
        queue.isSuspended = true
        for _ in 0..<count { queue.addOperation {} }
        return queue
    }

    // MARK: 9. Start latency on an idle queue

    /// Nanoseconds from adding an operation to an idle queue to the operation starting, `samples`
    /// times, with a pause between samples so that the workers go idle.
    public static func oursLatency(samples: Int, pauseMicroseconds: UInt32 = 500) -> [UInt64] {
        let queue = OpQueue()
        return latency(samples: samples, pause: pauseMicroseconds) { started in
            queue.addOperation { started(DispatchTime.now().uptimeNanoseconds) }
        }
    }

    public static func foundationLatency(samples: Int, pauseMicroseconds: UInt32 = 500) -> [UInt64] {
        let queue = OperationQueue()
        return latency(samples: samples, pause: pauseMicroseconds) { started in
            queue.addOperation { started(DispatchTime.now().uptimeNanoseconds) }
        }
    }

    /// The start latencies of the four rows of row 9, `samples` of each.
    public struct StartLatencies {
        /// Nanoseconds, sorted.
        public var ours: [UInt64] = [], foundation: [UInt64] = [], dispatch: [UInt64] = [], floor: [UInt64] = []
    }

    /// The start latencies of our queue, Foundation's, `DispatchQueue.global()` and the kernel's
    /// wake-up floor (a thread blocked in a semaphore), sampled in turn: one of each per round,
    /// each after the same pause. A noisy stretch of a shared machine then weighs on all four
    /// alike, where four runs one after another each met a different stretch.
    public static func interleavedStartLatencies(samples: Int, pauseMicroseconds: UInt32 = 500) -> StartLatencies {
        let ours = OpQueue()
        let foundation = OperationQueue()
        let box = StartBox()
        let wakeUp = DispatchSemaphore(value: 0)
        let woken = StartBox()
        let sleeper = Thread {
            while true {
                wakeUp.wait()
                woken.set(DispatchTime.now().uptimeNanoseconds)
            }
        }
        sleeper.start()
        func sample(_ box: StartBox, _ submit: () -> Void) -> UInt64 {
            sampleOnce(pause: pauseMicroseconds, box: box, submit)
        }
        var result = StartLatencies()
        for _ in 0..<samples {
            result.ours.append(sample(box) { ours.addOperation { box.set(DispatchTime.now().uptimeNanoseconds) } })
            result.foundation.append(sample(box) { foundation.addOperation { box.set(DispatchTime.now().uptimeNanoseconds) } })
            result.dispatch.append(sample(box) { DispatchQueue.global().async { box.set(DispatchTime.now().uptimeNanoseconds) } })
            result.floor.append(sample(woken) { wakeUp.signal() })
        }
        result.ours.sort()
        result.foundation.sort()
        result.dispatch.sort()
        result.floor.sort()
        return result
    }

    /// Submits `samples` times after a pause, each time timing from just before the submission to
    /// the time it reports through the reporter handed to `submit`.
    private static func latency(
        samples: Int, pause: UInt32, submit: (@escaping @Sendable (UInt64) -> Void) -> Void
    ) -> [UInt64] {
        let box = StartBox()
        var results: [UInt64] = []
        results.reserveCapacity(samples)
        for _ in 0..<samples {
            results.append(sampleOnce(pause: pause, box: box) { submit { started in box.set(started) } })
        }
        return results.sorted()
    }

    /// One sample: a pause, then nanoseconds from just before `submit` to the time it reports to
    /// `box`.
    private static func sampleOnce(pause: UInt32, box: StartBox, _ submit: () -> Void) -> UInt64 {
        usleep(pause)
        let added = DispatchTime.now().uptimeNanoseconds
        submit()
        let started = box.wait()
        return started > added ? started - added : 0
    }

    /// The p-th percentile (0…100) of sorted samples.
    public static func percentile(_ sorted: [UInt64], _ p: Double) -> UInt64 {
        guard !sorted.isEmpty else { return 0 }
        let index = min(sorted.count - 1, Int((Double(sorted.count - 1) * p / 100).rounded()))
        return sorted[index]
    }
}

/// Hands a timestamp from the operation to the measuring thread.
final class StartBox: @unchecked Sendable {
    // @unchecked Sendable: `value` is written before `semaphore.signal()` and read after
    // `semaphore.wait()`, which orders the two.
    private var value: UInt64 = 0
    private let semaphore = DispatchSemaphore(value: 0)

    func set(_ value: UInt64) {
        self.value = value
        semaphore.signal()
    }

    func wait() -> UInt64 {
        semaphore.wait()
        return value
    }
}

/// A small seeded generator, so that the random DAG is the same in every run.
public struct SplitMix64 {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
