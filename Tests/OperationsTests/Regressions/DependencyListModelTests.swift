import Testing
@testable import Operations

/// ``DependencyList`` against a plain array: random sequences of appends (counted or not),
/// removals, re-additions and finishes (`uncount`), at lengths on both sides of
/// ``DependencyList/indexThreshold`` (where the list changes representation) and through its
/// compaction, must list the same dependencies in the same order, each counted as the model
/// says, and a copy taken along the way keeps listing what it listed then. A failure names its
/// seed and the calls made so far.
///
/// The bodies run on a thread of their own (``onOwnThread(_:)``): they keep a thread busy for a
/// while (seconds under ThreadSanitizer), which must not be one of Swift's few cooperative threads.
@Suite(.offTheCooperativePool) struct DependencyListModelTests {
    static let targetLengths = [3, DependencyList.indexThreshold - 1, DependencyList.indexThreshold,
                                DependencyList.indexThreshold + 1, 2 * DependencyList.indexThreshold + 3, 100]

    @Test(arguments: targetLengths)
    func randomSequencesListWhatAPlainArrayLists(targetLength: Int) async {
        await onOwnThread {
            let pool = (0..<(targetLength * 2 + 8)).map { _ in BlockOp {} }
            let phase = max(60, targetLength * 5)
            for seed in UInt64(0)..<12 {
                var random = SplitMix64(seed: seed &* 104_729 &+ UInt64(targetLength))
                var list = DependencyList()
                var model: [(operation: Op, counted: Bool)] = []
                var trail = ModelTrail("seed \(seed), length \(targetLength)")
                // A copy taken now and then must keep what it listed while the list changes (the
                // long form is shared by reference, and copied before a change).
                var snapshot = (list: list, serials: [UInt64](), counted: 0)
                for step in 0..<(4 * phase) where !trail.failed {
                    if step % 37 == 0 { snapshot = (list, model.map(\.operation.serial), model.filter(\.counted).count) }
                    let roll = Double.random(in: 0..<1, using: &random)
                    let growing = model.count < ((step / phase) % 2 == 0 ? targetLength : 2)
                    if roll < (growing ? 0.6 : 0.15) {
                        let listed = Set(model.map { ObjectIdentifier($0.operation) })
                        guard let operation = (0..<8).lazy.map({ _ in random.pick(pool) }).first(where: { !listed.contains(ObjectIdentifier($0)) }) else { continue }
                        let counted = random.chance(0.7)
                        trail.note("append \(operation.serial)\(counted ? "" : " uncounted")")
                        list.append(operation, counted: counted)
                        model.append((operation, counted))
                    } else if roll < 0.8 {
                        let operation = model.isEmpty || random.chance(0.1) ? random.pick(pool) : random.pick(model).operation
                        trail.note("remove \(operation.serial)")
                        let removed = list.remove(operation)
                        let index = model.firstIndex { $0.operation === operation }
                        trail.verify(removed?.operation === index.map { model[$0].operation } && removed?.wasCounted == index.map { model[$0].counted },
                                     "remove(\(operation.serial)) returned \(String(describing: removed.map { ($0.operation.serial, $0.wasCounted) }))")
                        if let index { model.remove(at: index) }
                    } else if roll < 0.9 {
                        let operation = model.isEmpty || random.chance(0.1) ? random.pick(pool) : random.pick(model).operation
                        trail.note("uncount \(operation.serial)")
                        let index = model.firstIndex { $0.operation === operation }
                        let wasCounted = list.uncount(operation)
                        trail.verify(wasCounted == (index.map { model[$0].counted } ?? false), "uncount(\(operation.serial)) returned \(wasCounted)")
                        if let index { model[index].counted = false }
                    } else {
                        guard !model.isEmpty else { continue }
                        let operation = random.pick(model).operation
                        let counted = random.chance(0.5)
                        trail.note("re-add \(operation.serial)\(counted ? "" : " uncounted")")
                        trail.verify(list.remove(operation)?.operation === operation, "remove(\(operation.serial)) of a listed one failed")
                        model.removeAll { $0.operation === operation }
                        list.append(operation, counted: counted)
                        model.append((operation, counted))
                    }
                    trail.verify(list.count == model.count, "count \(list.count), not \(model.count)")
                    trail.verify(list.array.map(\.serial) == model.map(\.operation.serial), "array \(list.array.map(\.serial)), not \(model.map(\.operation.serial))")
                    trail.verify(Array(list).map(\.serial) == model.map(\.operation.serial), "iteration differs from the array")
                    trail.verify(list.countedCount == model.filter(\.counted).count, "\(list.countedCount) counted, not \(model.filter(\.counted).count)")
                    trail.verify(snapshot.list.array.map(\.serial) == snapshot.serials && snapshot.list.countedCount == snapshot.counted,
                                 "a copy lists \(snapshot.list.array.map(\.serial)) (\(snapshot.list.countedCount) counted), not \(snapshot.serials) (\(snapshot.counted)) as when it was taken")
                    trail.verify(list.firstCounted === model.first(where: \.counted)?.operation, "the first counted differs")
                    let probe = random.pick(pool)
                    trail.verify(list.contains(probe) == model.contains { $0.operation === probe }, "contains(\(probe.serial)) is \(list.contains(probe))")
                    #if OPERATIONS_INTERNAL_CHECKS
                    list.checkInvariants()
                    #endif
                }
                let taken = list.takeAll()
                trail.verify(taken.array.map(\.serial) == model.map(\.operation.serial), "takeAll gave \(taken.array.map(\.serial))")
                trail.verify(list.isEmpty, "the list is not empty after takeAll")
                if trail.failed { return }
            }
        }
    }

    /// Removing every dependency of an operation with many, one by one through the public API,
    /// leaves it with none, ready, and listing the others in order as it goes (removing was a
    /// search and a shift each, quadratic over the removals; the complexity checks time it).
    @Test func removingEveryDependencyOfAnOperationWithManyLeavesItReady() async {
        await onOwnThread {
            let dependent = BlockOp {}
            let dependencies = (0..<500).map { _ in BlockOp {} }
            for dependency in dependencies { dependent.addDependency(dependency) }
            #expect(!dependent.isReady)
            for (index, dependency) in dependencies.enumerated() {
                dependent.removeDependency(dependency)
                if index % 97 == 0 {
                    #expect(dependent.dependencies.map(\.serial) == dependencies[(index + 1)...].map(\.serial))
                }
            }
            #expect(dependent.dependencies.isEmpty)
            #expect(dependent.isReady)
        }
    }
}
