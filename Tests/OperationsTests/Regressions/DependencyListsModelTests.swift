import Testing
@testable import Operations

/// Both sides of dependencies, through the public API, against a plain model: random sequences of
/// adding, removing and re-adding dependencies and finishing dependencies, with many dependents
/// per dependency and many dependencies per dependent (so that both lists pass the lengths where
/// they change representation). Each dependent lists its dependencies in the model's order, is
/// ready exactly when the model says, and each dependency holds back exactly the model's
/// dependents.
@Suite struct DependencyListsModelTests {
    @Test(arguments: [(dependencies: 6, dependents: 4), (dependencies: 8, dependents: 40), (dependencies: 40, dependents: 6)])
    func randomDependencyChangesMatchAPlainModel(size: (dependencies: Int, dependents: Int)) throws {
        for seed in UInt64(0)..<25 {
            var random = SplitMix64(seed: seed &+ UInt64(size.dependencies) << 32)
            let dependencies = (0..<size.dependencies).map { _ in BlockOp {} }
            let dependents = (0..<size.dependents).map { _ in BlockOp {} }
            var listed: [[Int]] = Array(repeating: [], count: size.dependents)   // in order added
            var finished: Set<Int> = []
            var calls: [String] = []
            let positions = Dictionary(uniqueKeysWithValues: dependencies.enumerated().map { (ObjectIdentifier($1), $0) })
            for _ in 0..<(size.dependencies * size.dependents + 60) {
                let dependent = Int.random(in: 0..<size.dependents, using: &random)
                let dependency = Int.random(in: 0..<size.dependencies, using: &random)
                switch Double.random(in: 0..<1, using: &random) {
                case ..<0.6:
                    calls.append("\(dependent) + \(dependency)")
                    dependents[dependent].addDependency(dependencies[dependency])
                    if !listed[dependent].contains(dependency) { listed[dependent].append(dependency) }
                case ..<0.85:
                    // Mostly one that is listed, so that it can be added back later.
                    let removed = listed[dependent].isEmpty || random.chance(0.1)
                        ? dependency : random.pick(listed[dependent])
                    calls.append("\(dependent) - \(removed)")
                    dependents[dependent].removeDependency(dependencies[removed])
                    listed[dependent].removeAll { $0 == removed }
                case ..<0.9:
                    guard let readded = listed[dependent].randomElement(using: &random) else { continue }
                    calls.append("\(dependent) -+ \(readded)")
                    dependents[dependent].removeDependency(dependencies[readded])
                    dependents[dependent].addDependency(dependencies[readded])
                    listed[dependent].removeAll { $0 == readded }
                    listed[dependent].append(readded)
                default:
                    // Rarely, so that most dependencies stay unfinished long enough to gather
                    // many dependents.
                    guard random.chance(0.3), !finished.contains(dependency) else { continue }
                    calls.append("finish \(dependency)")
                    dependencies[dependency].start()
                    finished.insert(dependency)
                }
                // The two operations touched, and one other of each kind, after every step.
                let trail = calls.suffix(30).joined(separator: ", ")
                for index in [dependent, Int.random(in: 0..<size.dependents, using: &random)] {
                    let actual = dependents[index].dependencies.map { positions[ObjectIdentifier($0)]! }
                    try #require(actual == listed[index], "seed \(seed): dependent \(index) lists \(actual), not \(listed[index]), after \(trail)")
                    let ready = listed[index].allSatisfy(finished.contains)
                    try #require(dependents[index].isReady == ready, "seed \(seed): dependent \(index) ready \(!ready) after \(trail)")
                }
                for index in [dependency, Int.random(in: 0..<size.dependencies, using: &random)] {
                    let waiting = finished.contains(index) ? 0 : listed.count { $0.contains(index) }
                    let held = dependencies[index].withState { $0.dependents.count }
                    try #require(held == waiting, "seed \(seed): dependency \(index) holds back \(held), not \(waiting), after \(trail)")
                }
            }
            for (index, operation) in dependents.enumerated() {
                #expect(operation.dependencies.map { positions[ObjectIdentifier($0)]! } == listed[index], "seed \(seed)")
            }
            // Everything finishes: each dependent becomes ready once, after its last dependency.
            for (index, dependency) in dependencies.enumerated() where !finished.contains(index) {
                dependency.start()
                finished.insert(index)
                for (dependent, operation) in dependents.enumerated() {
                    #expect(operation.isReady == listed[dependent].allSatisfy(finished.contains))
                }
            }
            for dependent in dependents {
                dependent.start()
                #expect(dependent.isFinished && !dependent.isCancelled)
            }
        }
    }
}
