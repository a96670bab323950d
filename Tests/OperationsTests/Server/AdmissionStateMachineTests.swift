import Testing
import Synchronization
@testable import Operations

/// The queue's admission control as a pure state machine (`OpQueueStateMachine.Admission`),
/// checked against a plain reference model over random sequences of events (the count of
/// pending members, which the scheduler keeps, is kept here as the queue would).
@Suite struct AdmissionStateMachineTests {
    /// The reference: plain arrays, no cleverness.
    struct Model {
        var maxPending = Int.max
        var pending = 0
        var reserved = 0
        var isClosed = false
        var waiting: [UInt64] = []   // in order
        var granted: [UInt64] = []
        var refused: [UInt64] = []

        mutating func grant() {
            while !isClosed, pending + reserved < maxPending, !waiting.isEmpty {
                granted.append(waiting.removeFirst())
                reserved += 1
            }
        }
    }

    /// Records which waiter was told what.
    final class Told: Sendable {
        private let log = LockedBox<(granted: [UInt64], refused: [UInt64])>(([], []))
        func note(_ id: UInt64, _ error: (any Error)?) {
            log.withLockedValue { error == nil ? $0.granted.append(id) : $0.refused.append(id) }
        }
        var granted: [UInt64] { log.withLockedValue { $0.granted } }
        var refused: [UInt64] { log.withLockedValue { $0.refused } }
    }

    struct Closed: Error {}

    @Test(arguments: 0..<200) func randomEventsMatchTheReferenceModel(seed: Int) {
        var generator = SplitMix64(seed: UInt64(seed))
        var machine = OpQueueStateMachine.Admission()
        var pending = 0   // the scheduler's count of pending members
        var model = Model()
        let told = Told()
        var waiterIDs: [UInt64] = []   // machine ids of adders still possibly waiting
        var trail: [String] = []
        for step in 0..<300 {
            let event = Int.random(in: 0..<10, using: &generator)
            trail.append("\(event)")
            switch event {
            case 0, 1:
                pending += 1
                model.pending += 1
            case 2:
                guard model.pending > 0 else { continue }
                pending -= 1
                if machine.hasWaiters { machine.pendingDecreased(to: pending) }
                model.pending -= 1
                model.grant()
            case 3:
                pending += 1
                model.pending += 1
            case 4:
                let reserved = machine.reserve(pending: pending)
                let modelReserves = !model.isClosed && model.pending + model.reserved < model.maxPending && model.waiting.isEmpty
                #expect(reserved == modelReserves, "step \(step): reserve")
                if modelReserves { model.reserved += 1 }
            case 5:
                // A reservation's operation joins: it is pending from now on, and no room opens.
                guard model.reserved > 0 else { continue }
                machine.reservationUsed()
                pending += 1
                model.reserved -= 1
                model.pending += 1
            case 6:
                // An adder, as `enqueue(_:)`: reserves if it may, waits otherwise.
                guard !model.isClosed else { continue }
                if machine.reserve(pending: pending) {
                    #expect(model.pending + model.reserved < model.maxPending && model.waiting.isEmpty, "step \(step): reserve")
                    model.reserved += 1
                    continue
                }
                var assigned: UInt64 = 0
                let box = LockedBox<UInt64>(0)
                assigned = machine.wait { error in told.note(box.withLockedValue { $0 }, error) }
                box.withLockedValue { $0 = assigned }
                model.waiting.append(assigned)
                waiterIDs.append(assigned)
            case 7:
                guard let id = waiterIDs.randomElement(using: &generator) else { continue }
                let withdrawn = machine.withdraw(id, pending: pending)
                let wasWaiting = model.waiting.contains(id)
                #expect((withdrawn != nil) == wasWaiting, "step \(step): withdraw")
                if wasWaiting {
                    model.waiting.removeAll { $0 == id }
                    model.grant()
                }
            case 8:
                let bound = Int.random(in: 0..<6, using: &generator)
                machine.setMaxPending(bound, pending: pending)
                model.maxPending = bound
                model.grant()
            default:
                if Int.random(in: 0..<20, using: &generator) == 0 {
                    machine.close(Closed())
                    model.isClosed = true
                    model.refused.append(contentsOf: model.waiting)
                    model.waiting = []
                }
            }
            for (waiter, error) in machine.takeTold() { waiter.resume(error) }
            #expect(pending == model.pending && machine.reserved == model.reserved, "step \(step): counts after \(trail.suffix(12)) model \(model)")
            #expect(machine.waiterCount == model.waiting.count, "step \(step): waiters")
            #expect(told.granted == model.granted, "step \(step): granted")
            #expect(Set(told.refused) == Set(model.refused), "step \(step): refused")
            // The line keeps few withdrawn entries.
            #expect(machine.lineLength <= max(32, 2 * machine.waiterCount) + 1, "step \(step): line length")
        }
    }
}
