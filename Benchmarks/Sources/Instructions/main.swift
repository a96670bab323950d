import Dispatch
import Operations
import Workloads
#if ASYNC_QUEUE_PEER
import AsyncQueuePeer
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// `instructions WORKLOAD N`: runs one workload of N operations and exits, for counting
// instructions with callgrind (see `instructions.sh`, which runs it at two sizes and divides the
// difference by the difference of N: start-up and fixed costs cancel out). Instruction counts are
// repeatable where wall-clock times are not, so they are the regression figure for the hot path.
//
// The runs wait on a semaphore signalled by a barrier, not with `waitUntilAllOperationsAreFinished`,
// whose deadlock searches (every 50 ms while a thread waits) would add instructions that depend
// on how long the run takes.

let arguments = CommandLine.arguments
guard arguments.count == 3, let count = Int(arguments[2]), count > 0 else {
    print("usage: instructions independent|width-1|chain|fan-in|dag|groups|conditions|exclusivity|exclusivity-one-queue|chain-backwards|async-width-1|async-independent|async-stream|task-group|fifo-queue N")
    exit(2)
}

/// Adds `operations` to `queue` and waits, without a deadlock-searching wait, until they are done.
func run(_ operations: [Op], on queue: OpQueue = OpQueue()) {
    let done = DispatchSemaphore(value: 0)
    queue.addOperations(operations, waitUntilFinished: false)
    queue.addBarrierBlock { done.signal() }
    done.wait()
}

/// Runs the async `body` in a task and blocks until it is done (the peers' workloads are async).
func runAsync(_ body: @escaping @Sendable () async -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task {
        await body()
        done.signal()
    }
    done.wait()
}

/// Runs the workload `name` with `count` operations; `false` if there is no such workload.
///
/// A function, not top-level code: closures written in the top-level code are isolated to the
/// main actor, and Swift checks the executor each time one runs (about 200 instructions per
/// operation that are not the library's).
func runWorkload(_ name: String, count: Int) -> Bool {
    switch name {
    case "independent":
        run((0..<count).map { _ in BlockOp {} })
    case "width-1":
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        run((0..<count).map { _ in BlockOp {} }, on: queue)
    case "chain":
        var operations: [Op] = []
        operations.reserveCapacity(count)
        for _ in 0..<count {
            let operation = BlockOp {}
            if let last = operations.last { operation.addDependency(last) }
            operations.append(operation)
        }
        run(operations)
    case "chain-backwards":
        // The same chain made the other way (the complexity figure of issue 22's defect 6): the
        // operation that runs last is made first, so every edge is a backward one.
        let operations = (0..<count).map { _ in BlockOp {} }
        for index in stride(from: count - 2, through: 0, by: -1) {
            operations[index].addDependency(operations[index + 1])
        }
        run(operations)
    case "fan-in":
        let sink = BlockOp {}
        var operations: [Op] = []
        for _ in 0..<count {
            let operation = BlockOp {}
            sink.addDependency(operation)
            operations.append(operation)
        }
        run(operations + [sink])
    case "dag":
        var random = SplitMix64(seed: 42)   // the same DAG in every run
        var operations: [Op] = []
        for index in 0..<count {
            let operation = BlockOp {}
            if index > 0 {
                for _ in 0..<4 { operation.addDependency(operations[Int(random.next() % UInt64(index))]) }
            }
            operations.append(operation)
        }
        run(operations)
    case "groups":
        run((0..<count).map { _ in GroupOp(operations: (0..<10).map { _ in BlockOp {} }) })
    case "limited":
        // Issue 24's row 19: limited("x", permits: 4) over 4 queues, against `width-4`.
        Workloads.oursLimitedAcrossQueues(count)
    case "width-4":
        Workloads.oursWidthLimited(count)
    case "conditions":
        let always = OpCondition.predicate("always") { _ in true }
        run((0..<count).map { _ in
            let operation = BlockOp {}
            operation.addCondition(always)
            return operation
        })
    case "exclusivity":
        // Every operation asks for the category while a holder (in another queue) keeps it, and
        // waits; then each has its turn. The queue has width 1 and a marker after them, so that
        // every one has asked before the holder lets go, however the threads are scheduled (as
        // under valgrind): two passes through the queue per operation in every run.
        let category = OpCondition.mutuallyExclusive("instructions")
        let holderQueue = OpQueue()
        let holder = CategoryHolder(category, on: holderQueue)
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let operations = (0..<count).map { _ in
            let operation = BlockOp {}
            operation.addCondition(category)
            return operation
        }
        let asked = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        queue.addOperations(operations, waitUntilFinished: false)
        queue.addOperation { asked.signal() }
        let last = BlockOp { done.signal() }
        last.addCondition(category)
        queue.addOperation(last)
        asked.wait()
        holder.letGo()
        done.wait()
    case "exclusivity-one-queue":
        // The complexity figure of issue 22's defect 5: every operation in one queue (of the
        // default width) waits for a category that an operation of the same queue holds.
        let category = OpCondition.mutuallyExclusive("instructions")
        let queue = OpQueue()
        let holder = CategoryHolder(category, on: queue)
        let done = DispatchSemaphore(value: 0)
        let operations = (0..<count).map { index in
            let operation = index == count - 1 ? BlockOp { done.signal() } : BlockOp {}
            operation.addCondition(category)
            return operation
        }
        queue.addOperations(operations, waitUntilFinished: false)
        holder.letGo()
        done.wait()
    case "async-width-1":
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        run((0..<count).map { _ in AsyncOp {} }, on: queue)
    case "async-independent":
        run((0..<count).map { _ in AsyncOp {} })
    // The peers of the async rows, for instructions per job beside ours.
    case "async-stream":
        runAsync { await Workloads.fifoAsyncSerial(count) }
    case "task-group":
        runAsync { await Workloads.taskGroupAsyncIndependent(count) }
    case "fifo-queue":
        #if ASYNC_QUEUE_PEER
        runAsync { await AsyncQueuePeer.fifoQueueAsyncSerial(count) }
        #else
        print("fifo-queue needs swift-async-queue: set SWIFT_ASYNC_QUEUE_PATH (see README.md)")
        exit(2)
        #endif
    default:
        return false
    }
    return true
}

if !runWorkload(arguments[1], count: count) {
    print("unknown workload \(arguments[1])")
    exit(2)
}
