import Testing
@testable import Operations

/// ``DependentList`` against a plain array: random sequences of appends, removals, re-additions
/// and emptying, at lengths on both sides of ``DependentList/indexThreshold`` (where the list
/// changes representation) and through its compaction, must list the same dependents in the
/// same order, and a copy taken along the way keeps listing what it listed then. A failure names
/// its seed and the calls made so far.
///
/// The bodies run on a thread of their own (``onOwnThread(_:)``): they keep a thread busy for a
/// while (seconds under ThreadSanitizer), which must not be one of Swift's few cooperative threads.
@Suite(.offTheCooperativePool) struct DependentListModelTests {
    /// The longest lengths a sequence grows towards before it shrinks again: below, at and above
    /// the threshold, and far above it (so that removals compact the list, and it goes back below
    /// the threshold).
    static let targetLengths = [3, DependentList.indexThreshold - 1, DependentList.indexThreshold,
                                DependentList.indexThreshold + 1, 2 * DependentList.indexThreshold + 3, 100]

    @Test(arguments: targetLengths)
    func randomSequencesListWhatAPlainArrayLists(targetLength: Int) async {
        await onOwnThread {
            let pool = (0..<(targetLength * 2 + 8)).map { _ in BlockOp {} }
            // Long enough phases for the list to reach the target length, and to shrink back.
            let phase = max(60, targetLength * 5)
            for seed in UInt64(0)..<40 {
                var random = SplitMix64(seed: seed &* 7919 &+ UInt64(targetLength))
                var list = DependentList()
                var model: [Op] = []
                var trail = ModelTrail("seed \(seed), length \(targetLength)")
                // A copy taken now and then must keep what it listed while the list changes (the
                // long form is shared by reference, and copied before a change).
                var snapshot = (list: list, serials: [UInt64]())
                for step in 0..<(4 * phase) where !trail.failed {
                    if step % 37 == 0 { snapshot = (list, model.map(\.serial)) }
                    let roll = Double.random(in: 0..<1, using: &random)
                    // Grows towards the target length, then shrinks (so that the list compacts back
                    // into its short form), and again.
                    let growing = model.count < ((step / phase) % 2 == 0 ? targetLength : 2)
                    if roll < (growing ? 0.6 : 0.15) {
                        // Append one that is not listed: often one that was listed and removed before.
                        let listed = Set(model.map(\.serial))
                        guard let operation = (0..<8).lazy.map({ _ in random.pick(pool) }).first(where: { !listed.contains($0.serial) }) else { continue }
                        trail.note("append \(operation.serial)")
                        list.append(DependentLink(operation))
                        model.append(operation)
                    } else if roll < 0.9 {
                        // Remove one that is listed, or now and then one that is not.
                        let operation = model.isEmpty || random.chance(0.1) ? random.pick(pool) : random.pick(model)
                        trail.note("remove \(operation.serial)")
                        let removed = list.remove(serial: operation.serial)
                        let index = model.firstIndex { $0 === operation }
                        if let index { model.remove(at: index) }
                        trail.verify(removed == (index != nil), "remove(serial: \(operation.serial)) returned \(removed)")
                    } else if roll < 0.905 {
                        trail.note("removeAll")
                        var yielded: [(Op?, UInt64)] = []
                        list.removeAll { yielded.append(($0, $1)) }
                        trail.verify(yielded.map(\.1) == model.map(\.serial), "removeAll yielded \(yielded.map(\.1)), not \(model.map(\.serial))")
                        trail.verify(zip(yielded, model).allSatisfy { $0.0 === $1 }, "removeAll yielded other operations")
                        model.removeAll()
                    } else {
                        // Remove and add back at once: the case of defect 1.
                        guard !model.isEmpty else { continue }
                        let operation = random.pick(model)
                        trail.note("re-add \(operation.serial)")
                        let removed = list.remove(serial: operation.serial)
                        trail.verify(removed, "remove(serial: \(operation.serial)) of a listed one returned false")
                        model.removeAll { $0 === operation }
                        list.append(DependentLink(operation))
                        model.append(operation)
                    }
                    trail.verify(list.count == model.count, "count \(list.count), not \(model.count)")
                    trail.verify(list.isEmpty == model.isEmpty, "isEmpty \(list.isEmpty)")
                    trail.verify(list.serials == model.map(\.serial), "serials \(list.serials), not \(model.map(\.serial))")
                    trail.verify(snapshot.list.serials == snapshot.serials, "a copy lists \(snapshot.list.serials), not \(snapshot.serials) as when it was taken")
                    let probe = random.pick(pool)
                    trail.verify(list.contains(probe) == model.contains { $0 === probe }, "contains(\(probe.serial)) is \(list.contains(probe))")
                }
                var yielded: [UInt64] = []
                list.removeAll { yielded.append($1) }
                trail.verify(yielded == model.map(\.serial), "the final removeAll yielded \(yielded), not \(model.map(\.serial))")
                if trail.failed { return }
            }
        }
    }
}
