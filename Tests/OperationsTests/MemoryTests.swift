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

@Suite(.offTheCooperativePool) struct LongChainReleaseTests {
    private final class WeakBox: @unchecked Sendable {
        // @unchecked Sendable: used from the test's thread only.
        weak var object: Op?
    }

    @Test func releasingAVeryLongChainDoesNotOverflowTheStack() async {
        // Each operation keeps its dependency alive; dropping the last one of a 300,000-long chain
        // must not release the chain recursively. On a thread of its own (with a 4 MB stack): it
        // takes seconds under ThreadSanitizer, and a thread of the cooperative pool held that long
        // is one that other tests' tasks wait for.
        let (aliveWhileHeld, aliveAfterwards) = await onOwnThread {
            let first = WeakBox()
            var last: Op? = nil
            for _ in 0..<300_000 {
                let op = BlockOp {}
                if let last { op.addDependency(last) } else { first.object = op }
                last = op
            }
            let aliveWhileHeld = first.object != nil
            last = nil
            return (aliveWhileHeld, first.object != nil)
        }
        #expect(aliveWhileHeld)
        #expect(!aliveAfterwards)
    }

    @Test func abandonedOperationsAreReleasedEvenIfTheyNeverRan() {
        // A dependency does not retain its dependents, so a graph that is dropped without running
        // is released, dependents and dependencies alike.
        let dependency = WeakBox()
        let dependent = WeakBox()
        do {
            let a = BlockOp {}
            let b = BlockOp {}
            b.addDependency(a)
            dependency.object = a
            dependent.object = b
        }
        #expect(dependency.object == nil)
        #expect(dependent.object == nil)
    }

    @Test func aDependentReleasedBeforeItsDependencyFinishesIsSkipped() {
        let a = BlockOp {}
        let released = WeakBox()
        do {
            let b = BlockOp {}
            b.addDependency(a)
            released.object = b
        }
        #expect(released.object == nil)
        a.start()
        #expect(a.isFinished)
    }
}

@Suite struct ReleaseRaceTests {
    /// An asynchronous operation that only finishes when told to.
    private final class Manual: AsyncOp, @unchecked Sendable {
        // @unchecked Sendable: no state of its own.
        override func execute() {}
    }

    @Test func releasingAChainWhileItsDependencyFinishesIsSafe() {
        // A depends on B, B on X. The thread releasing A releases B while X finishes on another
        // thread and tells B: B must never be taken apart while it is still alive.
        let finisher = DispatchQueue(label: "finisher")
        for _ in 0..<5_000 {
            let x = Manual()
            x.start()
            var a: BlockOp? = BlockOp {}
            do {
                let b = BlockOp {}
                b.addDependency(x)
                a!.addDependency(b)
            }
            let finished = DispatchSemaphore(value: 0)
            finisher.async {
                x.finish()
                finished.signal()
            }
            a = nil
            finished.wait()
        }
        #expect(Bool(true))   // reaching here without a crash is the assertion
    }
}
