import Testing
@testable import Operations

/// What a finished operation holds strongly: its dependencies, except where a loop of strong
/// references among finished operations could form (see `Op.settleDependencies()` and
/// `Op.seal()`). Off the cooperative pool: the tests wait for releases on their threads, and the
/// random graphs run for seconds under a sanitizer.
@Suite(.offTheCooperativePool) struct FinishedOperationReferenceTests {
    @Test func aChainBuiltLastOperationFirstKeepsEveryLink() {
        // Every edge is to a newer operation that has a dependency of its own: each link is held
        // strongly because the one behind it is sealed, not weakly (when it would be released
        // with the caller's references, and drop out of `dependencies`).
        let count = 200
        let references = (0..<count).map { _ in WeakOpBox() }
        var last: Op?
        do {
            let operations = (0..<count).map { _ in BlockOp {} }
            for index in stride(from: count - 2, through: 0, by: -1) {
                operations[index].addDependency(operations[index + 1])
            }
            // Started in order on this thread, so that each settles before the next runs: in a
            // queue, an operation can settle before the dependency it waited for does, and then
            // holds it weakly if the one behind that is not sealed yet either.
            for operation in operations.reversed() { operation.start() }
            for (reference, operation) in zip(references, operations) { reference.set(operation) }
            last = operations[0]
        }
        var link = last
        var reached = 0
        while let operation = link {
            reached += 1
            link = operation.dependencies.first
        }
        #expect(reached == count)
        // And the chain is released with its last operation.
        last = nil
        #expect(eventually { references.allSatisfy { $0.operation == nil } })
    }

    @Test func anOperationWithADependencyThatIsNotADeadEndIsNotSealed() {
        let dependency = BlockOp {}, operation = BlockOp {}
        operation.addDependency(dependency)
        dependency.addDependency(BlockOp {})   // newer, never started: not sealed, has a dependency
        #expect(!operation.seal() && !operation.isSealed)
        #expect(dependency.isADeadEnd() == false)
    }

    @Test func aDependencyAddedToASealedOperationDoesNotCloseALoopOfStrongReferences() {
        // a → b → c, built so that a settling seals b; b then gets a dependency on a, which
        // would close the loop a → b → a among finished operations if b held it strongly.
        let references = (WeakOpBox(), WeakOpBox(), WeakOpBox())
        do {
            let a = BlockOp {}, b = BlockOp {}, c = BlockOp {}
            a.addDependency(b)
            b.addDependency(c)
            c.start()
            b.start()
            a.start()
            #expect(eventually { b.isSealed })
            b.addDependency(a)
            #expect(a.dependencies == [b] && b.dependencies == [c, a])
            references.0.set(a)
            references.1.set(b)
            references.2.set(c)
        }
        #expect(eventually { references.0.operation == nil }, "a is never released")
        #expect(eventually { references.1.operation == nil }, "b is never released")
        #expect(eventually { references.2.operation == nil }, "c is never released")
    }

    @Test func anOperationSealedBeforeItFinishesHoldsADependencyAddedLaterWeaklyOnceFinished() {
        // Sealing does not wait for the finish: b is sealed while pending, then gets a second
        // dependency, y, older than b (an edge settling alone would keep), and y later depends
        // on a, the older operation holding b: a → b → y → a among finished operations.
        let references = (WeakOpBox(), WeakOpBox(), WeakOpBox(), WeakOpBox())
        do {
            let a = BlockOp {}, y = BlockOp {}, b = BlockOp {}, c = BlockOp {}
            a.addDependency(b)
            b.addDependency(c)
            #expect(b.seal())
            b.addDependency(y)
            c.start()
            y.start()
            b.start()
            a.start()
            y.addDependency(a)
            #expect(a.dependencies == [b] && b.dependencies == [c, y] && y.dependencies == [a])
            references.0.set(a)
            references.1.set(b)
            references.2.set(c)
            references.3.set(y)
        }
        #expect(eventually { references.0.operation == nil }, "a is never released")
        #expect(eventually { references.1.operation == nil }, "b is never released")
        #expect(eventually { references.2.operation == nil }, "c is never released")
        #expect(eventually { references.3.operation == nil }, "y is never released")
    }

    @Test func anOperationHoldingADependencyThatIsNotADeadEndIsNotSealedFromItsSettledList() {
        // Made q, w, z, x, v in this order: z → q, v → z, x → z, x → v, w → x. x settles with v
        // held weakly and z strongly; z has a dependency and is not sealed, so x is not sealed
        // either, and w holds x weakly. z then depends on w: z → w → x → z would be a loop of
        // strong references if x had been sealed.
        let references = (0..<5).map { _ in WeakOpBox() }
        do {
            let q = BlockOp {}, w = BlockOp {}, z = BlockOp {}, x = BlockOp {}, v = BlockOp {}
            z.addDependency(q)
            v.addDependency(z)
            x.addDependency(z)
            x.addDependency(v)
            w.addDependency(x)
            for operation in [q, z, v, x, w] { operation.start() }
            #expect(!x.isSealed)
            z.addDependency(w)
            #expect(x.dependencies == [z, v] && w.dependencies == [x] && z.dependencies == [q, w])
            for (reference, operation) in zip(references, [q, w, z, x, v]) { reference.set(operation) }
        }
        #expect(eventually { references.allSatisfy { $0.operation == nil } }, "a loop through an operation sealed wrongly is never released")
    }

    @Test func aDependencyHeldStronglyInTheSettledListIsStillLookedAtAsNewer() {
        // A dependency added to a finished operation before it settles moves the list to the
        // settled form: the settling reads the newer dependencies from there.
        var machine = OpStateMachine()
        let older = BlockOp {}
        let newer = BlockOp {}
        _ = machine.addDependency(newer, dependencyIsUnfinished: false, isNewer: true)
        machine.settle()
        #expect(machine.newerDependencies(than: older.serial).array.map(ObjectIdentifier.init) == [ObjectIdentifier(newer)])
    }

    /// Random graphs against a model of their edges: built in random directions, run on a queue,
    /// then given random edges (loops among finished operations included) and removals while
    /// they settle. Every operation lists exactly the model's dependencies while the test holds
    /// them all, and every operation is released once the test lets go.
    @Test(arguments: 0..<8)
    func randomGraphsOfFinishedOperationsListTheirDependenciesAndAreReleased(seed: UInt64) {
        var random = SplitMix64(seed: 0x5EA1_0000 + seed)
        for _ in 0..<25 {
            let count = Int.random(in: 2...24, using: &random)
            let references = (0..<count).map { _ in WeakOpBox() }
            do {
                let operations = (0..<count).map { _ in BlockOp {} }
                var model = [[Int]](repeating: [], count: count)
                func reaches(_ from: Int, _ to: Int) -> Bool {
                    var seen: Set<Int> = [], stack = [from]
                    while let next = stack.popLast() {
                        if next == to { return true }
                        if seen.insert(next).inserted { stack.append(contentsOf: model[next]) }
                    }
                    return false
                }
                func add(_ dependent: Int, _ dependency: Int) {
                    operations[dependent].addDependency(operations[dependency])
                    if !model[dependent].contains(dependency) { model[dependent].append(dependency) }
                }
                // Before running: any direction, but no cycle (it would hold its operations back).
                for _ in 0..<Int.random(in: 0...(2 * count), using: &random) {
                    let dependent = Int.random(in: 0..<count, using: &random)
                    let dependency = Int.random(in: 0..<count, using: &random)
                    if dependent != dependency, !reaches(dependency, dependent) { add(dependent, dependency) }
                }
                let queue = OpQueue()
                queue.addOperations(operations, waitUntilFinished: true)
                // Finished: any edge, loops included, and removals, while they may still settle.
                for _ in 0..<Int.random(in: 0...count, using: &random) {
                    let dependent = Int.random(in: 0..<count, using: &random)
                    let dependency = Int.random(in: 0..<count, using: &random)
                    guard dependent != dependency else { continue }
                    if random.chance(0.2), model[dependent].contains(dependency) {
                        operations[dependent].removeDependency(operations[dependency])
                        model[dependent].removeAll { $0 == dependency }
                    } else {
                        add(dependent, dependency)
                    }
                }
                for (index, operation) in operations.enumerated() {
                    let listed = operation.dependencies.map { listedOperation in
                        operations.firstIndex { $0 === listedOperation } ?? -1
                    }
                    #expect(listed == model[index], "operation \(index) lists \(listed), the model \(model[index])")
                }
                for (reference, operation) in zip(references, operations) { reference.set(operation) }
            }
            #expect(eventually { references.allSatisfy { $0.operation == nil } },
                    "operations of a graph of \(count) are never released")
        }
    }
}
