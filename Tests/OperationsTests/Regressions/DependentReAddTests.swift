import Testing
@testable import Operations

/// A dependency removed and added again is one dependency, however many dependents its
/// dependency has and however many dependencies its dependent has: the dependent hears of the
/// finish once (issue 22, defect 1: from 16 dependents on, it heard twice, ran before its other
/// dependencies finished, and then trapped with "dependency count underflow").
@Suite struct DependentReAddTests {
    /// Dependents of one dependency, on either side of the threshold where its list of dependents
    /// changes representation.
    static let dependentCounts = [1, 2, DependentList.indexThreshold - 1, DependentList.indexThreshold,
                                  DependentList.indexThreshold + 1, 40, 200]

    @Test(arguments: dependentCounts)
    func aDependencyRemovedAndAddedAgainIsWaitedForOnce(dependents count: Int) throws {
        let dependency = BlockOp {}
        let other = BlockOp {}
        let dependent = BlockOp {}
        dependent.addDependency(dependency)
        dependent.addDependency(other)
        let bystanders = (1..<count).map { _ in BlockOp {} }
        for bystander in bystanders { bystander.addDependency(dependency) }
        dependent.removeDependency(dependency)
        dependent.addDependency(dependency)
        #expect(dependency.withState { $0.dependents.count } == count)
        #expect(dependent.dependencies.count == 2)
        dependency.start()
        #expect(bystanders.allSatisfy { $0.isReady })
        // It still waits for `other`; hearing twice would have made it ready.
        try #require(!dependent.isReady, "the dependent heard of its dependency's finish twice")
        other.start()
        #expect(dependent.isReady)
        dependent.start()
        #expect(dependent.isFinished && !dependent.isCancelled)
    }

    @Test(arguments: dependentCounts)
    func aDependencyRemovedAndAddedAgainManyTimesIsWaitedForOnceInAQueue(dependents count: Int) async throws {
        let runs = EventLog<String>()
        let dependency = BlockOp { runs.append("dependency") }
        let other = BlockOp { runs.append("other") }
        let dependent = BlockOp { runs.append("dependent") }
        let bystanders = (1..<count).map { _ in BlockOp {} }
        for bystander in bystanders { bystander.addDependency(dependency) }
        dependent.addDependency(dependency)
        dependent.addDependency(other)
        // Other dependents come and go in between, so that the re-added link lands among them.
        for round in 0..<5 {
            dependent.removeDependency(dependency)
            if round < bystanders.count { bystanders[round].removeDependency(dependency) }
            dependent.addDependency(dependency)
            if round < bystanders.count { bystanders[round].addDependency(dependency) }
        }
        #expect(dependency.withState { $0.dependents.count } == count)
        let queue = OpQueue()
        await queue.addOperations([dependent] + bystanders, waitUntilFinished: false)
        queue.addOperation(dependency)
        #expect(await eventuallyAsync { dependency.isFinished })
        try #require(!dependent.isReady, "the dependent heard of its dependency's finish twice")
        queue.addOperation(other)
        await queue.waitUntilAllOperationsAreFinished()
        #expect(runs.all.filter { $0 == "dependent" }.count == 1)
        #expect(runs.all.last == "dependent")
    }

    /// The same on the dependent's side: its list of dependencies, searched while short and
    /// indexed by a set from ``OpStateMachine/dependencySetThreshold`` on.
    @Test(arguments: [1, 2, OpStateMachine.dependencySetThreshold - 1, OpStateMachine.dependencySetThreshold,
                      OpStateMachine.dependencySetThreshold + 1, 40])
    func aDependentWithManyDependenciesWaitsForAReAddedOneOnce(dependencies count: Int) throws {
        let dependencies = (0..<count).map { _ in BlockOp {} }
        let dependent = BlockOp {}
        for dependency in dependencies { dependent.addDependency(dependency) }
        for dependency in [dependencies[0], dependencies[count / 2], dependencies[count - 1]] {
            dependent.removeDependency(dependency)
            dependent.addDependency(dependency)
            dependent.addDependency(dependency)   // already there: no effect
        }
        #expect(dependent.dependencies.count == count)
        #expect(Set(dependent.dependencies.map(ObjectIdentifier.init)) == Set(dependencies.map(ObjectIdentifier.init)))
        for dependency in dependencies.dropLast() {
            dependency.start()
            try #require(!dependent.isReady, "ready before its last dependency finished")
        }
        dependencies.last!.start()
        #expect(dependent.isReady)
        dependent.start()
        #expect(dependent.isFinished)
    }

    /// Removed, the dependency is forgotten for good: its finish tells the dependent nothing,
    /// whatever the length of its list.
    @Test(arguments: dependentCounts)
    func aRemovedDependencyNoLongerTellsItsDependent(dependents count: Int) {
        let dependency = BlockOp {}
        let other = BlockOp {}
        let dependent = BlockOp {}
        let bystanders = (1..<count).map { _ in BlockOp {} }
        for bystander in bystanders { bystander.addDependency(dependency) }
        dependent.addDependency(dependency)
        dependent.addDependency(other)
        dependent.removeDependency(dependency)
        dependent.addDependency(dependency)
        dependent.removeDependency(dependency)
        #expect(dependency.withState { $0.dependents.count } == count - 1)
        dependency.start()
        #expect(!dependent.isReady)
        other.start()
        #expect(dependent.isReady)
    }
}
