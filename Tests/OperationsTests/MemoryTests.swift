import Testing
import Dispatch
@testable import Operations

@Suite struct MemoryTests {
    private struct Weak: @unchecked Sendable {
        // @unchecked Sendable: only read after the queue is idle, from the test's thread.
        weak var object: AnyObject?
    }

    @Test func finishedOperationsAreReleasedByTheQueue() {
        let queue = OpQueue()
        var weakOps: [Weak] = []
        do {
            var ops: [Op] = []
            for index in 0..<100 {
                let op = BlockOp {}
                if index > 0 { op.addDependency(ops[index - 1]) }
                op.completionBlock = {}
                ops.append(op)
                weakOps.append(Weak(object: op))
            }
            queue.addOperations(ops, waitUntilFinished: true)
        }
        #expect(eventually { weakOps.allSatisfy { $0.object == nil } })
    }

    @Test func cancelledOperationsAreReleased() {
        let queue = OpQueue()
        queue.isSuspended = true
        var weakOps: [Weak] = []
        do {
            let ops = (0..<10).map { _ in BlockOp {} }
            weakOps = ops.map { Weak(object: $0) }
            queue.addOperations(ops, waitUntilFinished: false)
        }
        queue.cancelAllOperations()
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(eventually { weakOps.allSatisfy { $0.object == nil } })
    }

    @Test func idleQueueWithoutReferencesIsReleased() {
        var weakQueue = Weak()
        do {
            let queue = OpQueue()
            weakQueue.object = queue
            for _ in 0..<10 { queue.addOperation {} }
            queue.waitUntilAllOperationsAreFinished()
        }
        #expect(eventually { weakQueue.object == nil })
    }

    @Test func queueWithWorkStaysAliveUntilTheWorkIsDone() {
        var weakQueue = Weak()
        let finished = Gate()
        let release = Gate()
        do {
            let queue = OpQueue()
            weakQueue.object = queue
            queue.addOperation {
                release.wait()
                finished.open()
            }
        }
        #expect(weakQueue.object != nil)
        release.open()
        #expect(finished.wait())
        #expect(eventually { weakQueue.object == nil })
    }
}
