import Testing
import Dispatch
@testable import Operations

/// A task that an `async` operation's finish starts runs next on the same worker, without a
/// wake-up of another thread (``OpTaskExecutor``'s hand-off, opened by
/// ``OpQueue/drainStartsHere()``).
@Suite struct TaskHandOffTests {
    @Test func aTaskEnqueuedWhileTheThreadHandsOffIsKeptAndRunsNextOnTheSameThread() async {
        let (kept, sameThread): (Bool, Bool) = await withCheckedContinuation { continuation in
            Task(executorPreference: OpTaskExecutor.shared) {
                let context = ThreadContext.current
                let me = UInt(bitPattern: ThreadContext.identity)
                context.pointee.taskHandOff = .claiming
                let kept = LockedBox(false)
                Task(executorPreference: OpTaskExecutor.shared) {
                    continuation.resume(returning: (kept.withLockedValue { $0 }, UInt(bitPattern: ThreadContext.identity) == me))
                }
                if case .taken = context.pointee.taskHandOff {
                    kept.withLockedValue { $0 = true }
                }
            }
        }
        #expect(kept, "the second task went to the pool")
        #expect(sameThread, "the kept task ran on another thread")
    }

    @Test func onlyTheFirstTaskEnqueuedIsKept() async {
        let kept: [Bool] = await withCheckedContinuation { continuation in
            Task(executorPreference: OpTaskExecutor.shared) {
                let context = ThreadContext.current
                context.pointee.taskHandOff = .claiming
                var kept: [Bool] = []
                for _ in 0..<2 {
                    Task(executorPreference: OpTaskExecutor.shared) {}
                    if case .taken = context.pointee.taskHandOff { kept.append(true) } else { kept.append(false) }
                }
                continuation.resume(returning: kept)
            }
        }
        // Taken by the first, and still holding the first after the second, which went to the
        // pool (had it replaced the first, the first would never run).
        #expect(kept == [true, true])
    }

    /// User code that runs while the thread may hand off (a `willExecute` observer of the
    /// operation started there) and starts a task of its own, then waits for it, must not have
    /// that task kept behind its own wait: only the library's `execute()` claims the hand-off.
    @Test func aTaskThatAnObserverStartsAndWaitsForIsNotKeptBehindTheWait() async {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let first = AsyncOp {}
        let second = AsyncOp {}
        let observed = LockedBox(false)
        second.addObserver(BlockObserver(willExecute: { _ in
            let done = DispatchSemaphore(value: 0)
            Task(executorPreference: OpTaskExecutor.shared) { done.signal() }
            observed.withLockedValue { $0 = done.wait(timeout: .now() + 60) == .success }
        }))
        await queue.addOperations([first, second], waitUntilFinished: true)
        #expect(observed.withLockedValue { $0 }, "the observer's task never ran while it waited")
    }

    @Test func aWidthOneQueueOfAsyncOperationsStartsEachInTheTaskOfThePreviousOne() async {
        // The hand-off is open in each finishing task: every body after the first runs on the
        // thread of the task that finished before it, unless a 2 ms slice ran out while other
        // jobs waited (a crowded test run), so the test counts, and most must.
        let threads = LockedBox<[UInt]>([])
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        let operations = (0..<200).map { _ in
            AsyncOp { threads.withLockedValue { $0.append(UInt(bitPattern: ThreadContext.identity)) } }
        }
        await queue.addOperations(operations, waitUntilFinished: true)
        let seen = threads.withLockedValue { $0 }
        #expect(seen.count == 200)
        let sameAsPrevious = zip(seen, seen.dropFirst()).filter { $0 == $1 }.count
        #expect(sameAsPrevious > 100, "only \(sameAsPrevious) of 199 ran on the previous one's thread")
    }
}
