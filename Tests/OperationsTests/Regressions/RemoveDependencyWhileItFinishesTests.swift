import Testing
import Dispatch
@testable import Operations

/// `removeDependency(_:)` racing with that dependency's finish (found by the model-based test):
/// a finishing operation takes its list of dependents, and tells them one by one outside its
/// lock. A dependency removed in between used to keep its dependent not ready until the finish
/// arrived, though nothing else held it back: a `start()` there trapped ("not ready"). Now the
/// dependent is ready at once, and the finish, when it arrives, is ignored.
///
/// The window is opened on purpose: a `didFinish` observer of the dependency runs after it took
/// its dependents and before it tells them.
@Suite(.timeLimit(.minutes(1)))
struct RemoveDependencyWhileItFinishesTests {
    /// A dependent that logs each run of its body, and its one dependency.
    private static func dependentAndDependency() -> (runs: EventLog<Int>, dependent: BlockOp, dependency: BlockOp) {
        let runs = EventLog<Int>()
        let dependency = BlockOp {}
        let dependent = BlockOp { runs.append(1) }
        dependent.addDependency(dependency)
        return (runs, dependent, dependency)
    }

    @Test func aDependentWhoseDependencyIsRemovedAsItFinishesIsReadyAtOnceAndRunsOnce() async {
        let outcome: (readyAfterRemoval: Bool, runs: Int, finished: Bool) = await onOwnThread {
            let (runs, dependent, dependency) = Self.dependentAndDependency()
            let readyAfterRemoval = LockedBox(false)
            dependency.addObserver(BlockObserver(didFinish: { _, _ in
                dependent.removeDependency(dependency)
                let ready = dependent.isReady
                readyAfterRemoval.withLockedValue { $0 = ready }
                if ready { dependent.start() }   // traps if it is not ready: not started then
            }))
            dependency.start()
            // Not started by the observer (the defect): started now that the finish arrived, so
            // that the test fails on its expectation instead of waiting for good.
            if !dependent.isFinished && !dependent.isExecuting { dependent.start() }
            dependent.waitUntilFinished()
            return (readyAfterRemoval.withLockedValue { $0 }, runs.all.count, dependent.isFinished)
        }
        #expect(outcome.readyAfterRemoval, "the dependent was not ready after its only dependency was removed")
        #expect(outcome.finished)
        #expect(outcome.runs == 1)
    }

    @Test func aDependencyRemovedAndAddedBackAsItFinishesHoldsNothingBack() async {
        let outcome: (ready: Bool, runs: Int, dependencies: Int) = await onOwnThread {
            let (runs, dependent, dependency) = Self.dependentAndDependency()
            let ready = LockedBox(false)
            dependency.addObserver(BlockObserver(didFinish: { _, _ in
                dependent.removeDependency(dependency)
                dependent.addDependency(dependency)   // finishing: listed, but nothing to wait for
                let isReady = dependent.isReady
                ready.withLockedValue { $0 = isReady }
            }))
            let queue = OpQueue()
            queue.addOperation(dependent)
            dependency.start()
            queue.waitUntilAllOperationsAreFinished()
            return (ready.withLockedValue { $0 }, runs.all.count, dependent.dependencies.count)
        }
        #expect(outcome.ready)
        #expect(outcome.runs == 1)
        #expect(outcome.dependencies == 1)
    }

    /// Many dependents (the dependency's list is long) and a dependent with many dependencies
    /// (its own list is long): removing the finishing one releases only the dependents that had
    /// nothing else to wait for, each runs once, and none runs before its other dependencies.
    @Test func removalsAsADependencyFinishesReleaseOnlyWhatNothingElseHoldsBack() async {
        let problems: [String] = await onOwnThread {
            let log = EventLog<String>()
            let dependency = BlockOp {}
            let gate = BlockOp {}   // finished last: holds back the dependents that also wait for it
            let dependents = (0..<40).map { index in
                let operation = BlockOp { log.append("run \(index)") }
                operation.name = "d\(index)"
                operation.addDependency(dependency)
                if index % 2 == 1 {
                    operation.addDependency(gate)
                    // A long dependency list for some of them.
                    if index % 4 == 1 {
                        for _ in 0..<(DependencyList.indexThreshold + 2) { operation.addDependency(BlockOp {}.finishedAtOnce()) }
                    }
                }
                return operation
            }
            let readiness = LockedBox<[Int: Bool]>([:])
            dependency.addObserver(BlockObserver(didFinish: { _, _ in
                for (index, dependent) in dependents.enumerated() where index % 3 != 2 {
                    dependent.removeDependency(dependency)
                    let isReady = dependent.isReady
                    readiness.withLockedValue { $0[index] = isReady }
                }
            }))
            let queue = OpQueue()
            queue.addOperations(dependents, waitUntilFinished: false)
            dependency.start()
            // Those without the gate run; those with it wait.
            var problems: [String] = []
            eventually { dependents.enumerated().allSatisfy { $0.offset % 2 == 1 || $0.element.isFinished } }
            for (index, dependent) in dependents.enumerated() where index % 2 == 1 && dependent.isFinished {
                problems.append("d\(index) ran before its other dependency finished")
            }
            for (index, ready) in readiness.withLockedValue({ $0 }) where ready != (index % 2 == 0) {
                problems.append("d\(index) read ready \(ready) right after the removal")
            }
            gate.start()
            queue.waitUntilAllOperationsAreFinished()
            let runs = log.all
            for index in dependents.indices where runs.filter({ $0 == "run \(index)" }).count != 1 {
                problems.append("d\(index) ran \(runs.filter { $0 == "run \(index)" }.count) times")
            }
            return problems
        }
        #expect(problems.isEmpty, "\(problems)")
    }
}

extension BlockOp {
    /// The operation, started by hand and finished.
    fileprivate func finishedAtOnce() -> BlockOp {
        start()
        return self
    }
}
