import Testing
@testable import Operations

/// The search on a new edge (``DependencyCycleSearch``): what it costs while a graph is built,
/// and that it still finds every cycle it should (issue 22, defect 6: a chain built backwards, the
/// last operation first, searched up to 2,000 operations per edge). Its cost is counted in
/// operations reached, not timed.
@Suite(.offTheCooperativePool) struct CycleSearchTests {
    /// Installed before any cycle is closed.
    let recorder = DiagnosticsRecorder.shared

    /// Runs the search that `addDependency(_:)` ran for the edge just added, for its count.
    private func searchCost(_ dependent: Op, _ dependency: Op) -> Int {
        DependencyCycleSearch.run(dependent: dependent, dependency: dependency, limit: DependencyCycles.searchLimit).visited
    }

    @Test func buildingAChainBackwardsLooksAtAFewOperationsPerEdge() {
        let count = DependencyCycles.searchLimit + 1_000
        // Created last to first: ops[count - 1] runs first, every edge is backward.
        let ops = (0..<count).map { _ in BlockOp {} }
        var visited = 0
        for index in stride(from: count - 2, through: 0, by: -1) {
            ops[index].addDependency(ops[index + 1])
            visited += searchCost(ops[index], ops[index + 1])
        }
        #expect(visited <= 3 * count, "\(visited) operations reached for \(count - 1) edges")
        ops[0].cancel()
        for op in ops { op.cancel() }
    }

    @Test func buildingAChainBackwardsFromItsEndLooksAtAFewOperationsPerEdge() {
        let count = DependencyCycles.searchLimit + 1_000
        let ops = (0..<count).map { _ in BlockOp {} }
        var visited = 0
        for index in 0..<(count - 1) {
            ops[index].addDependency(ops[index + 1])
            visited += searchCost(ops[index], ops[index + 1])
        }
        #expect(visited <= 3 * count, "\(visited) operations reached for \(count - 1) edges")
    }

    @Test func buildingAChainInAnyOrderLooksAtTheShorterSideOfEachEdge() {
        var random = SplitMix64(seed: 22)
        let count = 4_000
        // Created in a random order, linked in another: each edge joins two pieces of the chain.
        let ops = (0..<count).map { _ in BlockOp {} }.shuffled(using: &random)
        var visited = 0
        for index in (1..<count).shuffled(using: &random) {
            ops[index].addDependency(ops[index - 1])
            visited += searchCost(ops[index], ops[index - 1])
        }
        // Smaller side first: at most about log2(count) looks per operation over the build.
        let bound = 2 * count * (Int.bitWidth - count.leadingZeroBitCount) + 4 * count
        #expect(visited <= bound, "\(visited) operations reached for \(count - 1) edges (bound \(bound))")
    }

    // MARK: Still found

    /// The dependent is waited for by many operations that are not on the cycle: the search does
    /// not spend its budget on them, and finds a cycle as long as the one side allows.
    @Test func aLongCycleIsFoundBehindADependentThatManyOperationsWaitFor() {
        let token = uniqueToken("wide")
        let length = DependencyCycles.searchLimit - 10
        let ops = (0..<length).map { index in
            let op = BlockOp {}
            op.name = "\(token)-\(index)"
            return op
        }
        for index in 1..<length { ops[index].addDependency(ops[index - 1]) }   // ops[i] waits for ops[i-1]
        let waiters = (0..<5_000).map { _ in BlockOp {} }
        for waiter in waiters { waiter.addDependency(ops[0]) }
        ops[0].addDependency(ops[length - 1])   // closes the cycle
        let found = recorder.cyclesFound(mentioning: token)
        #expect(found.count == 1 && found.first?.operations.count == length)
        ops[0].removeDependency(ops[length - 1])   // operations on a loop keep each other alive
    }

    /// The new dependent is a child of a running group; the group waits for it, and the new
    /// dependency waits for the group: the side of the search that starts at the dependent goes
    /// through the group.
    @Test func aCycleThroughTheRunningGroupOfTheNewDependentIsFoundAtOnce() async {
        let token = uniqueToken("dependent-group")
        let hold = Gate()
        let started = Gate()
        let blocker = BlockOp { started.open(); _ = hold.wait() }
        let child = BlockOp {}
        child.name = "\(token)-child"
        child.addDependency(blocker)
        let group = GroupOp(operations: [blocker, child])
        group.name = "\(token)-group"
        // Waiters of the group, so that the dependent's side is the smaller one to end at.
        let chain = (0..<50).map { index in
            let op = BlockOp {}
            op.name = "\(token)-\(index)"
            return op
        }
        chain[0].addDependency(group)
        for index in 1..<chain.count { chain[index].addDependency(chain[index - 1]) }
        await OpQueue().addOperations([group], waitUntilFinished: false)
        #expect(await started.waitOffThread())
        child.addDependency(chain[chain.count - 1])   // child → chain → group (running) → child
        let found = recorder.cyclesFound(mentioning: token)
        #expect(found.count == 1 && found.first?.operations.count == chain.count + 2)
        child.cancel()
        hold.open()
        await OpQueue().addOperations(chain, waitUntilFinished: true)
        #expect(group.isFinished && chain.allSatisfy { $0.isFinished && !$0.isCancelled })
    }

    /// Random graphs, edges added one at a time: the search finds a cycle exactly when the new
    /// dependency already waits for the new dependent (following only edges that hold an operation
    /// back), and the cycle it finds is made of such edges.
    @Test func theSearchFindsACycleExactlyWhenTheDependencyWaitsForTheDependent() {
        for seed in UInt64(0)..<60 {
            var random = SplitMix64(seed: seed)
            let count = Int.random(in: 4...40, using: &random)
            let ops = (0..<count).map { _ in BlockOp {} }
            let cancelled = Set((0..<count).filter { _ in random.chance(0.1) })
            let finished = Set((0..<count).filter { !cancelled.contains($0) && random.chance(0.1) })
            for index in finished { ops[index].start() }
            for index in cancelled { ops[index].cancel() }
            var edges: [[Int]] = Array(repeating: [], count: count)   // edges[a]: what a depends on
            func blocking(_ index: Int) -> [Int] {
                cancelled.contains(index) || finished.contains(index) ? [] : edges[index].filter { !finished.contains($0) }
            }
            func reaches(_ start: Int, _ target: Int) -> Bool {
                var seen: Set<Int> = [start]
                var stack = [start]
                while let node = stack.popLast() {
                    if node == target { return true }
                    for next in blocking(node) where seen.insert(next).inserted { stack.append(next) }
                }
                return false
            }
            for _ in 0..<(count * 3) {
                let dependent = Int.random(in: 0..<count, using: &random)
                let dependency = Int.random(in: 0..<count, using: &random)
                guard dependent != dependency, !edges[dependent].contains(dependency) else { continue }
                if random.chance(0.2), let removed = edges[dependent].randomElement(using: &random) {
                    ops[dependent].removeDependency(ops[removed])
                    edges[dependent].removeAll { $0 == removed }
                }
                ops[dependent].addDependency(ops[dependency])
                edges[dependent].append(dependency)
                guard !cancelled.contains(dependent), !finished.contains(dependent), !finished.contains(dependency) else { continue }
                let expected = reaches(dependency, dependent)
                let search = DependencyCycleSearch.run(dependent: ops[dependent], dependency: ops[dependency], limit: .max)
                #expect((search.cycle != nil) == expected, "seed \(seed): edge \(dependent) → \(dependency)")
                if let cycle = search.cycle {
                    let path = cycle.map { operation in ops.firstIndex { $0 === operation }! }
                    #expect(path.first == dependent && Set(path).count == path.count, "seed \(seed): \(path)")
                    for (position, node) in path.enumerated() {
                        let next = path[(position + 1) % path.count]
                        #expect(blocking(node).contains(next), "seed \(seed): \(node) does not wait for \(next) in \(path)")
                    }
                }
            }
            // Pending operations on a loop keep each other alive.
            for (dependent, dependencies) in edges.enumerated() {
                for dependency in dependencies { ops[dependent].removeDependency(ops[dependency]) }
            }
        }
    }
}
