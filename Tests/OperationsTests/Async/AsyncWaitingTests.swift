import Testing
import Dispatch
@testable import Operations

#if canImport(Glibc)
import Glibc
#endif

/// The number of threads of this process, from /proc.
private func threadCount() -> Int {
    #if os(Linux)
    guard let file = fopen("/proc/self/status", "r") else { return -1 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix("Threads:") {
            return Int(text.dropFirst("Threads:".count).trimmingCharacters(in: " \t\n")) ?? -1
        }
    }
    return -1
    #else
    return -1
    #endif
}

private extension StringProtocol {
    func trimmingCharacters(in characters: String) -> String {
        String(drop { characters.contains($0) }.reversed().drop { characters.contains($0) }.reversed())
    }
}

@Suite struct AsyncWaitingTests {
    @Test func aThousandAwaitingTasksUseABoundedNumberOfThreads() async {
        let queue = OpQueue()
        queue.isSuspended = true
        let ops = (0..<1_000).map { _ in BlockOp {} }
        await queue.addOperations(ops, waitUntilFinished: false)
        let before = threadCount()
        let completed = await withTaskGroup(of: Bool.self) { group -> Int in
            for op in ops {
                group.addTask {
                    await op.waitUntilFinished()
                    return op.isFinished
                }
            }
            // Every task is now suspended in a wait; none holds a thread. If each wait blocked a
            // thread, 1,000 more would exist. Other suites running in parallel start threads of
            // their own (workers, the suites kept off the cooperative pool): a few hundred at
            // most, hence the margin, half of what blocking waits would add.
            try? await Task.sleep(for: .milliseconds(50))
            let during = threadCount()
            #expect(during - before < 500, "threads before: \(before), while 1,000 tasks wait: \(during)")
            queue.isSuspended = false
            var count = 0
            for await finished in group where finished { count += 1 }
            return count
        }
        #expect(completed == 1_000)
    }

    @Test func awaitingTheQueueDoesNotBlockAThread() async {
        let queue = OpQueue()
        for _ in 0..<100 { queue.addOperation { blockThread(milliseconds: 0) } }
        await queue.waitUntilAllOperationsAreFinished()
        #expect(queue.operationCount == 0)
    }

    @Test func addOperationsCanAwaitTheOperations() async {
        let queue = OpQueue()
        let count = LockedBox(0)
        let ops = (0..<10).map { _ in BlockOp { count.withLockedValue { $0 += 1 } } }
        await queue.addOperations(ops, waitUntilFinished: true)
        #expect(count.withLockedValue { $0 } == 10)
        #expect(ops.allSatisfy { $0.isFinished })
    }

    @Test func awaitingAFinishedOperationReturnsAtOnce() async {
        let op = BlockOp {}
        op.start()
        await op.waitUntilFinished()
        #expect(op.isFinished)
    }

    @Test(.oneExitTestAtATime) func awaitingItselfFromItsOwnBodyTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class SelfAwaiting: AsyncOp, @unchecked Sendable {
                // @unchecked Sendable: no state of its own.
                override func execute() async throws {
                    await waitUntilFinished()
                }
            }
            let op = SelfAwaiting()
            op.name = "self-awaiting"
            let queue = OpQueue()
            queue.addOperation(op)
            await queue.waitUntilAllOperationsAreFinished()
        }
        expectStandardError(of: result, toContain: ["\"self-awaiting\"", "from inside its own body"])
    }

    @Test(.oneExitTestAtATime) func awaitingTheQueueFromItsOwnAsyncOperationTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.name = "own"
            let op = AsyncOp { await OpQueue.current?.waitUntilAllOperationsAreFinished() }
            op.name = "awaiter"
            queue.addOperation(op)
            try? await Task.sleep(for: .seconds(5))
        }
        expectStandardError(of: result, toContain: ["OpQueue \"own\"", "AsyncOp \"awaiter\"", "cannot empty"])
    }

    @Test func currentIsTheQueueInsideAnAsyncBody() async throws {
        let queue = OpQueue()
        let seen = try await queue.addOperation { () async -> OpQueue? in
            await Task.yield()
            return OpQueue.current
        }.value
        #expect(seen === queue)
    }
}
