import Testing
import Dispatch
@testable import Operations

/// `addOperation(_:coalescingKey:policy:)`: identical work in flight runs once.
@Suite struct CoalescingTests {
    /// A download of `url`, held back by `gate` if given.
    static func fetch(_ url: String, gate: Gate? = nil) -> ResultOp<String> {
        ResultOp {
            gate?.wait()
            return "contents of \(url)"
        }
    }

    @Test func joinExistingReturnsTheOperationInFlightAndLeavesTheNewOneUntouched() async throws {
        let queue = OpQueue()
        let release = Gate()
        let first = queue.addOperation(Self.fetch("a", gate: release), coalescingKey: "a")
        let second = Self.fetch("a")
        let joined = queue.addOperation(second, coalescingKey: "a")
        #expect(joined === first)
        #expect(!second.isFinished && !second.isCancelled && queue.operationCount == 1)
        // Running now, still joined.
        #expect(await eventuallyAsync { first.isExecuting })
        #expect(queue.addOperation(Self.fetch("a"), coalescingKey: "a") === first)
        // Another key is other work.
        let other = queue.addOperation(Self.fetch("b"), coalescingKey: "b")
        #expect(other !== first)
        release.open()
        let value = try await joined.value
        #expect(value == "contents of a")
        await queue.waitUntilAllOperationsAreFinished()
    }

    @Test func aKeyIsFreeAgainOnceItsOperationFinished() async {
        let queue = OpQueue()
        let first = queue.addOperation(Self.fetch("a"), coalescingKey: "a")
        await first.waitUntilFinished()
        let second = queue.addOperation(Self.fetch("a"), coalescingKey: "a")
        #expect(second !== first)
        await queue.waitUntilAllOperationsAreFinished()
        #expect(queue.coalescingKeyCount == 0)
    }

    @Test func replacePendingCancelsTheWaitingOperationAndAddsTheNewOne() async {
        let queue = OpQueue()
        queue.isSuspended = true
        let first = queue.addOperation(Self.fetch("q"), coalescingKey: "search")
        let second = queue.addOperation(Self.fetch("qu"), coalescingKey: "search", policy: .replacePending)
        #expect(second !== first)
        #expect(first.isCancelled && !second.isCancelled)
        // The newest holds the key: a join now gets it.
        #expect(queue.addOperation(Self.fetch("x"), coalescingKey: "search") === second)
        queue.isSuspended = false
        await queue.waitUntilAllOperationsAreFinished()
        #expect(second.isFinished && !second.isCancelled)
        #expect(queue.coalescingKeyCount == 0)
    }

    @Test func replacePendingLeavesARunningOperationToFinish() async {
        let queue = OpQueue()
        let release = Gate()
        let running = queue.addOperation(Self.fetch("a", gate: release), coalescingKey: "k")
        #expect(await eventuallyAsync { running.isExecuting })
        let replacement = queue.addOperation(Self.fetch("b"), coalescingKey: "k", policy: .replacePending)
        #expect(replacement !== running && !running.isCancelled)
        release.open()
        await queue.waitUntilAllOperationsAreFinished()
        #expect((try? running.output?.get()) == "contents of a")
        #expect((try? replacement.output?.get()) == "contents of b")
    }

    @Test func cancellingTheSharedOperationEndsTheWaitOfEveryCaller() async {
        let queue = OpQueue()
        queue.isSuspended = true
        let shared = queue.addOperation(Self.fetch("a"), coalescingKey: "a")
        let joined = (0..<3).map { _ in queue.addOperation(Self.fetch("a"), coalescingKey: "a") }
        #expect(joined.allSatisfy { $0 === shared })
        let callers = joined.map { op in Task { try await op.value } }
        shared.cancel()
        queue.isSuspended = false
        for caller in callers {
            await #expect(throws: CancellationError.self) { _ = try await caller.value }
        }
        await queue.waitUntilAllOperationsAreFinished()
        #expect(queue.coalescingKeyCount == 0)
    }

    @Test func aCallerThatPassesItsCancellationOnCancelsTheSharedWorkForEveryCaller() async {
        let queue = OpQueue()
        let release = Gate()
        let shared = queue.addOperation(Self.fetch("a", gate: release), coalescingKey: "a")
        let patientJoined = queue.addOperation(Self.fetch("a"), coalescingKey: "a")
        let hastyJoined = queue.addOperation(Self.fetch("a"), coalescingKey: "a")
        #expect(patientJoined === shared && hastyJoined === shared)
        let patient = Task { try await patientJoined.value }
        let hasty = Task { try await hastyJoined.value(cancellingOnTaskCancellation: true) }
        #expect(await eventuallyAsync { shared.isExecuting })
        hasty.cancel()
        #expect(await eventuallyAsync { shared.isCancelled })
        release.open()
        await #expect(throws: CancellationError.self) { _ = try await hasty.value }
        await #expect(throws: CancellationError.self) { _ = try await patient.value }
    }

    @Test func aClosedQueueTurnsACoalescedOperationAwayAndKeepsNoKey() async {
        let queue = OpQueue()
        queue.close()
        let op = queue.addOperation(Self.fetch("a"), coalescingKey: "a")
        #expect(op.isCancelled && op.isFinished)
        #expect(queue.coalescingKeyCount == 0)
    }

    @Test func keysBelongToTheirQueue() async {
        let one = OpQueue()
        let two = OpQueue()
        one.isSuspended = true
        two.isSuspended = true
        let a = one.addOperation(Self.fetch("a"), coalescingKey: "a")
        let b = two.addOperation(Self.fetch("a"), coalescingKey: "a")
        #expect(a !== b)
        one.isSuspended = false
        two.isSuspended = false
        await one.waitUntilAllOperationsAreFinished()
        await two.waitUntilAllOperationsAreFinished()
    }

    @Test func theKeyTableFollowsTheOperationsInTheQueueNotHowManyWentThrough() async {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 2
        for round in 0..<3 {
            for index in 0..<1_000 {
                queue.addOperation(BlockOp {}, coalescingKey: "\(round)-\(index)")
            }
            await queue.waitUntilAllOperationsAreFinished()
            #expect(queue.coalescingKeyCount == 0)
        }
    }

    @Test(.oneExitTestAtATime) func aKeyHeldByAnotherTypeOfOperationTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.isSuspended = true
            queue.addOperation(BlockOp {}, coalescingKey: "thumb")
            queue.addOperation(Self.fetch("x"), coalescingKey: "thumb")
        }
        expectStandardError(of: result, toContain: ["\"thumb\"", "ResultOp<String>", "BlockOp", "use another key"])
    }
}
