import Testing
@testable import Operations

/// An error each child of the long-lived group fails with.
private struct Failure: Error {
    let number: Int
}

/// A group lets its children go as they finish, and keeps its errors bounded; a `RetryOp` keeps
/// its recent attempts: memory is bounded at any age (issue 22, defect 21: every child, attempt
/// and error was held until the group finished, so a long-lived group grew without bound).
/// The checks count the structures' sizes, not the process's memory.
@Suite(.offTheCooperativePool) struct GroupMemoryTests {
    /// The most children a group holds at once when `running` of them are running or waiting:
    /// besides those, each worker thread may be between a child's finish and its release (on a
    /// loaded machine, a thread that wakes another to run the next child is often preempted
    /// there). It does not grow with the number of children run.
    static func inFlightBound(_ running: Int) -> Int {
        running + WorkerPool.shared.maximumThreadCount
    }

    /// Runs `total` children through one group, in `chains` chains: each child adds the next of
    /// its chain while the group runs, and fails. Samples of the group's sizes are taken as it
    /// runs; weak references to every 1,000th child show whether finished children are released.
    @Test func aGroupThatRunsAHundredThousandChildrenHoldsOnlyTheUnfinishedOnes() async {
        let total = 100_000
        let chains = 4
        let group = GroupOp()
        let made = LockedBox(0)
        let heldChildren = LockedBox<[Int]>([])
        let sampled = LockedBox<[WeakOp]>([])
        let releasedWhileRunning = LockedBox<Bool?>(nil)

        @Sendable func makeChild() -> Op? {
            let number: Int? = made.withLockedValue { made in
                guard made < total else { return nil }
                made += 1
                return made
            }
            guard let number else { return nil }
            let child = RecordingOp { op in
                if number % 1_000 == 0 {
                    heldChildren.withLockedValue { $0.append(group.children.count) }
                }
                if let next = makeChild() {
                    group.addChild(next)
                } else if releasedWhileRunning.withLockedValue({ $0 == nil }) {
                    // The end of the first chain to run out, with the group still running: the
                    // sampled children that finished long ago are gone.
                    let released = eventually(seconds: 10) {
                        sampled.withLockedValue { $0.dropLast(2 * chains) }.allSatisfy { $0.operation == nil }
                    }
                    releasedWhileRunning.withLockedValue { $0 = released }
                }
                op.cancel(with: Failure(number: number))
            }
            if number % 1_000 == 0 {
                sampled.withLockedValue { $0.append(WeakOp(child)) }
            }
            return child
        }

        group.addChildren((0..<chains).compactMap { _ in makeChild() })
        OpQueue().addOperation(group)
        await group.waitUntilFinished()

        #expect(releasedWhileRunning.withLockedValue { $0 } == true)
        let held = heldChildren.withLockedValue { $0 }
        #expect(held.count == total / 1_000)
        #expect(held.allSatisfy { $0 <= GroupMemoryTests.inFlightBound(2 * chains) },
                "the group held \(held.max() ?? 0) children at once")
        #expect(group.children.isEmpty)
        #expect(group.childCount == total && group.finishedChildCount == total)
        let failure = group.error as? GroupError
        #expect(failure?.errors.count == GroupError.errorLimit)
        #expect(failure?.droppedErrorCount == total - GroupError.errorLimit)
        #expect(failure?.failureCount == total)
        #expect(group.progress.completedUnitCount == Int64(total))
    }

    @Test func aRetryOfManyAttemptsKeepsItsRecentAttempts() async {
        let total = 20_000
        let largest = LockedBox(0)
        let heldChildren = LockedBox(0)
        let retry = RetryOp(maxAttempts: total) { number in
            BlockOp {
                if number % 500 == 0, let retry = Op.current?.group as? RetryOp {
                    largest.withLockedValue { $0 = max($0, retry.attempts.count) }
                    heldChildren.withLockedValue { $0 = max($0, retry.children.count) }
                }
                Op.current?.cancel(with: Failure(number: number))
            }
        }
        OpQueue().addOperation(retry)
        await retry.waitUntilFinished()

        #expect(retry.attemptCount == total)
        #expect(retry.attempts.count == RetryOp.attemptHistoryLimit)
        #expect(largest.withLockedValue { $0 } <= RetryOp.attemptHistoryLimit)
        let held = heldChildren.withLockedValue { $0 }
        #expect(held <= GroupMemoryTests.inFlightBound(2), "the RetryOp held \(held) children at once")
        #expect((retry.attempts.last?.error as? Failure)?.number == total)
        #expect((retry.error as? Failure)?.number == total)
        #expect(retry.childCount == total && retry.finishedChildCount == total)
    }

    @Test func aGroupErrorListsTheFirstErrorsAndCountsTheOthers() {
        let listed = GroupError(errors: [Failure(number: 1), Failure(number: 2)], droppedErrorCount: 3)
        #expect(listed.failureCount == 5)
        #expect(listed.description.hasPrefix("5 child operation(s) of the group failed"))
        #expect(listed.description.hasSuffix("; and 3 more, not kept"))
        #expect(GroupError(errors: [Failure(number: 1)]).droppedErrorCount == 0)
    }

    @Test func childrenListsTheUnfinishedChildrenInTheOrderTheyWereAdded() {
        let release = Gate()
        let held = RecordingOp(name: "held") { _ in release.wait() }
        let quick = BlockOp {}
        let last = BlockOp {}
        last.addDependency(held)
        let group = GroupOp(operations: [held, quick, last])
        #expect(group.children.count == 3 && group.children[0] === held && group.children[2] === last)
        OpQueue().addOperation(group)
        #expect(eventually { group.finishedChildCount == 1 })
        let children = group.children
        #expect(children.count == 2 && children[0] === held && children[1] === last)
        #expect(group.childCount == 3)
        release.open()
        group.waitUntilFinished()
        #expect(group.children.isEmpty && group.childCount == 3 && group.finishedChildCount == 3)
    }
}
