import Testing
import Dispatch
@testable import Operations

/// Issue 23: `async` work of operations runs on the library's own threads (``OpTaskExecutor``),
/// so it finishes while synchronous code blocks every thread of Swift's cooperative pool (one per
/// core). Each test blocks them all with tasks that wait on a semaphore, drives the operations
/// from a thread of its own, and releases the blockers at the end. A watchdog, not a clock, ends
/// a wait that would hang: a regression fails the test instead of freezing the suite. The tests
/// take turns (`.serialized`): two of them blocking the pool at once would each wait for the
/// threads the other holds.
@Suite(.serialized) struct CooperativePoolStarvationTests {
    /// How long a wait may last before the test calls it a hang: far longer than the work takes
    /// (milliseconds), so the verdict does not depend on the machine's speed.
    private static let watchdog = DispatchTimeInterval.seconds(60)

    /// How long the blockers may take to get a cooperative thread each: other tests of a
    /// crowded run (synchronous ones, which block theirs) hold them meanwhile, for minutes under
    /// ThreadSanitizer. Not a measure of the library.
    private static let blockersStart = DispatchTimeInterval.seconds(900)

    /// Blocks every thread of the cooperative pool (as many as cores, on Linux) with synchronous
    /// waits inside tasks, runs `body`, and lets them go. Returns `body`'s failures, or why the
    /// threads could not all be blocked.
    private static func withCooperativePoolBlocked(_ body: @escaping @Sendable () -> [String]) async -> [String] {
        await onOwnThread {
            let threads = WorkerPool.shared.coreCount
            let started = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            for _ in 0..<threads {
                Task.detached {
                    started.signal()
                    release.wait()
                }
            }
            defer { for _ in 0..<threads { release.signal() } }
            for _ in 0..<threads where started.wait(timeout: .now() + blockersStart) == .timedOut {
                return ["the cooperative threads could not all be blocked"]
            }
            return body()
        }
    }

    /// Waits on this thread until `operation` finishes; `false` if the watchdog ran out.
    private static func finishes(_ operation: Op) -> Bool {
        let done = DispatchSemaphore(value: 0)
        operation.completionBlock = { done.signal() }
        if operation.isFinished { return true }
        return done.wait(timeout: .now() + watchdog) == .success
    }

    @Test func anAsyncBodyFinishesWhileEveryCooperativeThreadIsBlocked() async {
        let failures = await Self.withCooperativePoolBlocked {
            let operation = AsyncBlockOp { () async -> Int in
                await Task.yield()
                return 42
            }
            let queue = OpQueue()
            queue.addOperation(operation)
            guard Self.finishes(operation) else { return ["the async body never finished"] }
            return (try? operation.output?.get()) == 42 ? [] : ["the body's value is lost"]
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func anAsyncClosureAddedToAQueueFinishesWhileEveryCooperativeThreadIsBlocked() async {
        let failures = await Self.withCooperativePoolBlocked {
            let queue = OpQueue()
            let operation = queue.addOperation { () async throws -> Int in
                try await Task.sleep(for: .milliseconds(1))
                return 7
            }
            return Self.finishes(operation) ? [] : ["the closure never finished"]
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func anAsyncConditionIsEvaluatedWhileEveryCooperativeThreadIsBlocked() async {
        let failures = await Self.withCooperativePoolBlocked {
            let ran = LockedBox(false)
            let operation = BlockOp { ran.withLockedValue { $0 = true } }
            operation.addCondition(.evaluate("yields") { _ in
                await Task.yield()
                return true
            })
            OpQueue().addOperation(operation)
            guard Self.finishes(operation) else { return ["the condition was never evaluated"] }
            return ran.withLockedValue { $0 } ? [] : ["the body did not run"]
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func asyncChildrenOfAGroupFinishWhileEveryCooperativeThreadIsBlocked() async {
        let failures = await Self.withCooperativePoolBlocked {
            let children = (0..<4).map { _ in AsyncBlockOp { await Task.yield() } }
            let group = GroupOp(operations: children)
            OpQueue().addOperation(group)
            return Self.finishes(group) ? [] : ["the group never finished"]
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func aDelayEndsWhileEveryCooperativeThreadIsBlocked() async {
        let failures = await Self.withCooperativePoolBlocked {
            let delay = DelayOp(for: .milliseconds(1))
            OpQueue().addOperation(delay)
            return Self.finishes(delay) ? [] : ["the delay never ended"]
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func aRetryWaitsItsBackoffAndRetriesAsyncAttemptsWhileEveryCooperativeThreadIsBlocked() async {
        struct Transient: Error {}
        let failures = await Self.withCooperativePoolBlocked {
            let retry = RetryOp(maxAttempts: 3, backoff: .constant(.milliseconds(1))) { attempt in
                AsyncBlockOp { () async throws -> Int in
                    await Task.yield()
                    if attempt < 3 { throw Transient() }
                    return attempt
                }
            }
            OpQueue().addOperation(retry)
            guard Self.finishes(retry) else { return ["the retry never finished"] }
            var failures: [String] = []
            if retry.attemptCount != 3 { failures.append("\(retry.attemptCount) attempts, not 3") }
            if retry.error != nil { failures.append("the retry failed: \(String(describing: retry.error))") }
            return failures
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func aTimeoutCancelsAnAsyncBodyWhileEveryCooperativeThreadIsBlocked() async {
        let failures = await Self.withCooperativePoolBlocked {
            // The body waits an hour unless cancelled: only the timeout ends it.
            let operation = AsyncOp { try await Task.sleep(for: .seconds(3_600)) }
            operation.timeout = .milliseconds(1)
            OpQueue().addOperation(operation)
            guard Self.finishes(operation) else { return ["the timeout never ended the body"] }
            return operation.error is OpTimeoutError ? [] : ["the error is \(String(describing: operation.error)), not a timeout"]
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    /// The server-shaped freeze the issue reports: request handlers (tasks, at least one per
    /// cooperative thread) each call a synchronous helper that adds an `AsyncOp` and waits for it
    /// with the blocking `waitUntilFinished()`. Every cooperative thread sits in a wait; the async
    /// bodies they wait for must run elsewhere.
    @Test func synchronousWaitsForAsyncOperationsInEveryCooperativeThreadAllReturn() async {
        let failures: [String] = await onOwnThread {
            let handlers = WorkerPool.shared.coreCount * 2
            let queue = OpQueue()
            let returned = DispatchSemaphore(value: 0)
            @Sendable func synchronousHelper() -> Int {
                let operation = AsyncBlockOp { () async -> Int in
                    await Task.yield()
                    return 1
                }
                queue.addOperation(operation)
                operation.waitUntilFinished()
                return (try? operation.output?.get()) ?? 0
            }
            let total = LockedBox(0)
            let started = DispatchSemaphore(value: 0)
            for _ in 0..<handlers {
                Task.detached {
                    started.signal()
                    let value = synchronousHelper()
                    total.withLockedValue { $0 += value }
                    returned.signal()
                }
            }
            // Each handler needs a cooperative thread to start (others of a crowded run may hold
            // them); once all have started, their waits must all return.
            for index in 0..<handlers where started.wait(timeout: .now() + Self.blockersStart) == .timedOut {
                return ["\(handlers - index) of \(handlers) handlers never started"]
            }
            for index in 0..<handlers where returned.wait(timeout: .now() + Self.watchdog) == .timedOut {
                return ["\(handlers - index) of \(handlers) handlers never returned"]
            }
            return total.withLockedValue { $0 } == handlers ? [] : ["the handlers got \(total.withLockedValue { $0 }) of \(handlers)"]
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func aBodyGoesOnOnTheLibrarysThreadsAfterItSleepsAndYields() async {
        let onWorkers = LockedBox<[Bool]>([])
        let operation = AsyncOp {
            onWorkers.withLockedValue { $0.append(ThreadContext.current.pointee.worker != nil) }
            try await Task.sleep(for: .milliseconds(1))
            onWorkers.withLockedValue { $0.append(ThreadContext.current.pointee.worker != nil) }
            await Task.yield()
            onWorkers.withLockedValue { $0.append(ThreadContext.current.pointee.worker != nil) }
        }
        await OpQueue().addOperations([operation], waitUntilFinished: true)
        #expect(operation.error == nil)
        #expect(onWorkers.withLockedValue { $0 } == [true, true, true])
    }

    @Test func theExecutorRunsJobsAtTheQualityOfServiceOfTheirPriority() {
        #expect(OpTaskExecutor.qualityOfService(of: JobPriority(rawValue: TaskPriority.high.rawValue)) == .userInitiated)
        #expect(OpTaskExecutor.qualityOfService(of: JobPriority(rawValue: 33)) == .userInteractive)
        #expect(OpTaskExecutor.qualityOfService(of: JobPriority(rawValue: TaskPriority.medium.rawValue)) == .default)
        #expect(OpTaskExecutor.qualityOfService(of: JobPriority(rawValue: TaskPriority.utility.rawValue)) == .utility)
        #expect(OpTaskExecutor.qualityOfService(of: JobPriority(rawValue: TaskPriority.background.rawValue)) == .background)
        // Between two levels: the class of the lower one.
        #expect(OpTaskExecutor.qualityOfService(of: JobPriority(rawValue: TaskPriority.medium.rawValue + 1)) == .default)
    }

    @Test func userTasksThatPreferTheLibrarysExecutorRunOnItsWorkersWhileEveryCooperativeThreadIsBlocked() async {
        let failures = await Self.withCooperativePoolBlocked {
            let done = DispatchSemaphore(value: 0)
            let onWorkers = LockedBox<[Bool]>([])
            Task(executorPreference: OpTaskExecutor.shared) {
                onWorkers.withLockedValue { $0.append(ThreadContext.current.pointee.worker != nil) }
                await Task.yield()
                onWorkers.withLockedValue { $0.append(ThreadContext.current.pointee.worker != nil) }
                done.signal()
            }
            guard done.wait(timeout: .now() + Self.watchdog) == .success else { return ["the task never finished"] }
            let seen = onWorkers.withLockedValue { $0 }
            return seen == [true, true] ? [] : ["ran on a worker of the pool: \(seen)"]
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}
