import Testing
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
@testable import Operations

/// Every programmer error traps with a message that names the operation or queue and says what
/// to do instead. Each test runs the misuse in a child process and reads its standard error.
@Suite struct MisuseTests {
    @Test(.oneExitTestAtATime) func startingAnOperationThatIsInAQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.isSuspended = true
            let op = BlockOp {}
            op.name = "in-queue"
            queue.addOperation(op)
            op.start()
        }
        expectStandardError(of: result, toContain: ["\"in-queue\"", "in an OpQueue", "Remove the start() call"])
    }

    @Test(.oneExitTestAtATime) func startingAnExecutingOperationTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = RecordingOp(name: "reentrant") { op in op.start() }
            op.start()
        }
        expectStandardError(of: result, toContain: ["\"reentrant\"", "while it is executing"])
    }

    @Test(.oneExitTestAtATime) func startingAnOperationThatIsNotReadyTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let a = BlockOp {}
            let b = BlockOp {}
            b.name = "needs-a"
            b.addDependency(a)
            b.start()
        }
        expectStandardError(of: result, toContain: ["\"needs-a\"", "not ready", "Check isReady"])
    }

    @Test(.oneExitTestAtATime) func addingAnOperationToASecondQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let first = OpQueue()
            first.isSuspended = true
            let second = OpQueue()
            let op = BlockOp {}
            op.name = "twice"
            first.addOperation(op)
            second.addOperation(op)
        }
        expectStandardError(of: result, toContain: ["\"twice\"", "already in a queue"])
    }

    @Test(.oneExitTestAtATime) func addingAnOperationToTheSameQueueTwiceTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.isSuspended = true
            let op = BlockOp {}
            op.name = "same"
            await queue.addOperations([op, op], waitUntilFinished: false)
        }
        expectStandardError(of: result, toContain: ["\"same\"", "already in a queue"])
    }

    @Test(.oneExitTestAtATime) func theMessageOfARefusedAdditionIsMadeOutsideTheQueueLock() async {
        // `description` may be overridden, and may read the queue: it must not run under the
        // queue's lock (a pthread error, or a hang, instead of the message).
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.isSuspended = true
            let op = QueueDescribingOp(queue: queue)
            queue.addOperation(op)
            queue.addOperation(op)
        }
        expectStandardError(of: result, toContain: ["an operation of a queue holding 1", "already in a queue"])
    }

    @Test(.oneExitTestAtATime) func addingAnExecutingOperationTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = RecordingOp(name: "busy") { op in OpQueue().addOperation(op) }
            op.start()
        }
        expectStandardError(of: result, toContain: ["\"busy\"", "while it is executing"])
    }

    @Test(.oneExitTestAtATime) func addingAFinishedOperationTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = BlockOp {}
            op.name = "done"
            op.start()
            OpQueue().addOperation(op)
        }
        expectStandardError(of: result, toContain: ["\"done\"", "after it finished"])
    }

    @Test(.oneExitTestAtATime) func negativeMaxConcurrentOperationCountTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.name = "workers"
            queue.maxConcurrentOperationCount = -5
        }
        expectStandardError(of: result, toContain: ["\"workers\"", "-5", "positive count"])
    }

    @Test(.oneExitTestAtATime) func dependingOnItselfTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = BlockOp {}
            op.name = "selfish"
            op.addDependency(op)
        }
        expectStandardError(of: result, toContain: ["\"selfish\"", "cannot depend on itself"])
    }

    @Test(.oneExitTestAtATime) func changingTheUnderlyingQueueOfABusyQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.name = "busy-queue"
            queue.isSuspended = true
            queue.addOperation {}
            queue.underlyingQueue = DispatchQueue(label: "other")
        }
        expectStandardError(of: result, toContain: ["\"busy-queue\"", "underlyingQueue", "1 operation"])
    }

    @Test(.oneExitTestAtATime) func changingTheMainQueuesUnderlyingQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            OpQueue.main.underlyingQueue = DispatchQueue(label: "other")
        }
        expectStandardError(of: result, toContain: ["OpQueue.main", "cannot be changed"])
    }

    @Test(.oneExitTestAtATime) func readingTheResultOfAnInvocationOpWhoseMainSkippedSuperTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Overriding: InvocationOp<Int>, @unchecked Sendable {
                // @unchecked Sendable: no state of its own.
                override func main() {}   // forgets super.main()
            }
            let op = Overriding { 42 }
            op.name = "forgetful"
            op.start()
            _ = try? op.result
        }
        expectStandardError(of: result, toContain: ["\"forgetful\"", "without calling super.main()", "Call super.main()"])
    }

    @Test(.oneExitTestAtATime) func changingTheMainQueuesWidthTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            OpQueue.main.maxConcurrentOperationCount = 4
        }
        expectStandardError(of: result, toContain: ["OpQueue.main", "one operation at a time", "Create your own OpQueue"])
    }

    @Test(.oneExitTestAtATime) func blockOpsFinishWhenThePoolIsAtItsThreadLimit() async {
        // With as many threads as cores, every worker can be inside a BlockOp waiting for its
        // other blocks: the waiting thread runs them itself.
        await #expect(processExitsWith: .success) {
            setenv("OPERATIONS_MAX_THREADS", "2", 1)
            let queue = OpQueue()
            for _ in 0..<8 {
                let op = BlockOp { usleep(20_000) }
                op.addExecutionBlock { usleep(20_000) }
                queue.addOperation(op)
            }
            await queue.waitUntilAllOperationsAreFinished()
            exit(0)
        }
    }

    @Test(.oneExitTestAtATime) func observingAnUnsupportedQueuePropertyTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            _ = queue.observe(\.qualityOfService) { _, _ in }
        }
        expectStandardError(of: result, toContain: ["not observable", "operationCount"])
    }
}

/// Checks that a trapped child process printed every one of `fragments` on standard error.
func expectStandardError(
    of result: ExitTest.Result?,
    toContain fragments: [String],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    for fragment in fragments {
        #expect(text.contains(fragment), "standard error lacks \"\(fragment)\": \(text)", sourceLocation: sourceLocation)
    }
}
