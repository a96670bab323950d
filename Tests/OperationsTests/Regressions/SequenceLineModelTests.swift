import Testing
@testable import Operations

/// ``SequenceLine`` (the line of an exclusivity category) against a plain array kept sorted:
/// random sequences of appends (in order, out of order, and with the number of an element that
/// is already in, as a request asking again after its withdrawal does), removals of the first
/// element and sweeps, must serve the elements oldest first, and `removeFirst` must remove the
/// very element `first` named (on ties too). A failure names its seed and the last calls.
@Suite(.offTheCooperativePool) struct SequenceLineModelTests {
    private final class Element: SequenceOrdered {
        let sequenceNumber: UInt64
        var isSwept = false
        init(_ sequenceNumber: UInt64) { self.sequenceNumber = sequenceNumber }
    }

    @Test(arguments: [4, 40, 400])
    func randomSequencesServeWhatASortedArrayServes(targetLength: Int) async {
        await onOwnThread {
            for seed in UInt64(0)..<60 {
                var random = SplitMix64(seed: seed &* 6007 &+ UInt64(targetLength))
                var line = SequenceLine<Element>()
                var model: [Element] = []   // sorted by sequence number; ties in any order
                var next: UInt64 = 1_000
                var trail = ModelTrail("seed \(seed), length \(targetLength)", shownCalls: 30)
                let phase = max(50, targetLength * 4)
                for step in 0..<(4 * phase) where !trail.failed {
                    let growing = model.count < ((step / phase) % 2 == 0 ? targetLength : 1)
                    let roll = Double.random(in: 0..<1, using: &random)
                    if roll < (growing ? 0.65 : 0.2) {
                        let number: UInt64
                        switch Double.random(in: 0..<1, using: &random) {
                        case ..<0.5:
                            next += 1
                            number = next   // in order
                        case ..<0.9:
                            number = UInt64.random(in: 0...next, using: &random)   // out of order
                        default:
                            number = model.isEmpty ? next : random.pick(model).sequenceNumber   // a tie
                        }
                        trail.note("append \(number)")
                        let element = Element(number)
                        line.append(element)
                        let index = model.firstIndex { $0.sequenceNumber > number } ?? model.endIndex
                        model.insert(element, at: index)
                    } else if roll < 0.97 {
                        guard let first = line.first else {
                            trail.verify(model.isEmpty, "first is nil with \(model.count) elements")
                            continue
                        }
                        trail.note("removeFirst \(first.sequenceNumber)")
                        trail.verify(first.sequenceNumber == model.first?.sequenceNumber,
                               "first is \(first.sequenceNumber), not \(model.first?.sequenceNumber ?? 0)")
                        line.removeFirst()
                        guard let index = model.firstIndex(where: { $0 === first }) else {
                            trail.verify(false, "first named an element that is not in the line")
                            continue
                        }
                        model.remove(at: index)
                        trail.verify(!line.elements.contains { $0 === first }, "removeFirst removed another element than first")
                    } else {
                        trail.note("removeAll(where:)")
                        for element in model where random.chance(0.5) { element.isSwept = true }
                        line.removeAll { $0.isSwept }
                        model.removeAll { $0.isSwept }
                    }
                    trail.verify(line.count == model.count, "count \(line.count), not \(model.count)")
                    trail.verify(line.isOrdered, "out of order")
                    if step % 8 == 0 || model.count < 16 {
                        trail.verify(Set(line.elements.map(ObjectIdentifier.init)) == Set(model.map(ObjectIdentifier.init)),
                               "holds other elements than the model")
                    }
                }
                if !trail.failed {
                    trail.verify(line.capacity <= 2 * max(64, targetLength * 4),
                           "room for \(line.capacity) elements, holding \(line.count)")
                }
            }
        }
    }
}
