import Testing
@testable import Operations

/// The packed word of a counted category (count, waiters bit, retired bit), driven by random
/// sequences of takes and give-backs with and without the table, requests that wait, withdrawals
/// and re-declarations, checked after every step against a plain model: a count, a first-come
/// first-served line, and who holds what.
@Suite struct PermitWordModelTests {
    /// Stands for an operation.
    private final class Token {}

    /// What the model says about one category.
    private struct Model {
        let permits: Int
        /// Permits held (with or without a record) or reserved for an offered request.
        var inUse = 0
        /// Waiting requests, first first.
        var line: [Int] = []
        /// Holders that took their permit without the table.
        var lockFree: Set<Int> = []
        /// Holders through the table (granted), and requests offered their permit.
        var granted: Set<Int> = []
        var offered: Set<Int> = []

        /// A permit comes back: the front of the line is offered it, or the count goes down.
        /// Returns who was offered it.
        mutating func permitCameBack() -> Int? {
            guard !line.isEmpty else {
                inUse -= 1
                return nil
            }
            let front = line.removeFirst()
            offered.insert(front)
            return front
        }
    }

    @Test(arguments: 0..<60) func randomSequencesMatchAPlainModel(seed: Int) {
        var random = SplitMix64(seed: UInt64(seed) &* 7919 &+ 3)
        var machine = LimitStateMachine()
        let permits = Int.random(in: 1...4, using: &random) + 1   // a limit of one is an exclusive category
        let spec = OpLimit.Spec(permits: permits, interval: nil)
        var category = machine.declare("c", spec)
        var limit = OpLimit(category: "c", spec: spec, clock: nil, bound: category)
        var model = Model(permits: permits)
        let tokens = (0..<40).map { _ in Token() }
        func id(_ index: Int) -> ObjectIdentifier { ObjectIdentifier(tokens[index]) }
        func request(_ index: Int) -> LimitStateMachine.Request {
            LimitStateMachine.Request(operation: id(index), limits: [limit], sequence: UInt64(index), grantsAtTurn: false,
                                     payload: tokens[index])
        }
        var trail: [String] = []

        for step in 0..<400 {
            let busy = model.lockFree.union(model.granted).union(model.offered).union(model.line)
            let idle = (0..<tokens.count).filter { !busy.contains($0) }
            switch Int.random(in: 0..<9, using: &random) {
            case 0, 1:
                // Takes without the table: only with a free permit and nobody in line.
                guard let index = idle.randomElement(using: &random) else { continue }
                let took = category.takeWithoutLock()
                trail.append("take \(index) \(took)")
                let modelTakes = model.line.isEmpty && model.inUse < permits
                #expect(took == modelTakes, "step \(step): take without the table; \(trail)")
                if took {
                    model.inUse += 1
                    model.lockFree.insert(index)
                }
            case 2, 3:
                // A holder without a record gives back: without the table if nobody waits.
                guard let index = model.lockFree.randomElement(using: &random) else { continue }
                model.lockFree.remove(index)
                trail.append("give back \(index)")
                if !category.giveBackWithoutLock() {
                    #expect(!model.line.isEmpty, "step \(step): refused to give back with nobody in line; \(trail)")
                    machine.permitCameBack(category)
                } else {
                    #expect(model.line.isEmpty, "step \(step): gave back without the table past a line; \(trail)")
                }
                let turns = machine.takeTurns().map(\.request.operation)
                let expected = model.permitCameBack().map { [id($0)] } ?? []
                #expect(turns == expected, "step \(step): turns; \(trail)")
            case 4, 5:
                // Asks the table.
                guard let index = idle.randomElement(using: &random) else { continue }
                let mayWait = Int.random(in: 0..<4, using: &random) != 0
                let outcome = machine.request(request(index), mayWait: mayWait)
                trail.append("ask \(index) mayWait \(mayWait) -> \(outcome)")
                if model.line.isEmpty && model.inUse < permits {
                    #expect(outcome == .granted(startsIntervals: true), "step \(step): ask; \(trail)")
                    model.inUse += 1
                    model.granted.insert(index)
                } else if mayWait {
                    #expect(outcome == .waiting, "step \(step): ask; \(trail)")
                    model.line.append(index)
                } else {
                    #expect(outcome == .refused, "step \(step): ask; \(trail)")
                }
            case 6:
                // An offered request asks again and takes its reserved permit.
                guard let index = model.offered.randomElement(using: &random) else { continue }
                trail.append("take offered \(index)")
                #expect(machine.request(request(index)) == .granted(startsIntervals: true), "step \(step): offered; \(trail)")
                model.offered.remove(index)
                model.granted.insert(index)
            case 7:
                // A holder, an offered request or a waiter through the table leaves.
                let candidates = Array(model.granted.union(model.offered).union(model.line))
                guard let index = candidates.randomElement(using: &random) else { continue }
                trail.append("release \(index)")
                machine.release(id(index))
                var expected: [ObjectIdentifier] = []
                if let position = model.line.firstIndex(of: index) {
                    model.line.remove(at: position)
                } else {
                    model.granted.remove(index)
                    model.offered.remove(index)
                    if let front = model.permitCameBack() { expected = [id(front)] }
                }
                #expect(machine.takeTurns().map(\.request.operation) == expected, "step \(step): release; \(trail)")
            default:
                // Declared again, with the same permits or (when unused) others: a category not
                // in use is retired and replaced; the old binding then goes through the table.
                let inUse = model.inUse > 0
                let declared = machine.declare("c", spec)
                trail.append("declare again (in use: \(inUse))")
                #expect(declared === category, "step \(step): the same declaration binds to the entry; \(trail)")
                if !inUse && Bool.random(using: &random) {
                    let other = machine.declare("c", OpLimit.Spec(permits: permits + 1, interval: nil))
                    #expect(other !== category && category.isRetired, "step \(step): an unused entry is replaced; \(trail)")
                    #expect(!category.takeWithoutLock(), "step \(step): a retired category takes nothing; \(trail)")
                    // Back to the declaration under test: its entry is made again.
                    category = machine.declare("c", spec)
                    limit = OpLimit(category: "c", spec: spec, clock: nil, bound: category)
                    #expect(other.isRetired && !category.isRetired, "step \(step): declared back; \(trail)")
                }
            }
            #expect(machine.permitsInUse(of: "c") == model.inUse, "step \(step): count; \(trail)")
            #expect(machine.waiting(in: "c").map { ObjectIdentifier($0) } == model.line.map { ObjectIdentifier(tokens[$0]) },
                    "step \(step): line; \(trail)")
            #if OPERATIONS_INTERNAL_CHECKS
            machine.checkInvariants()
            #endif
        }
        // Everyone still holding or waiting through the table leaves, as their operations would:
        // the line empties, and only the holders without a record keep permits. (Left behind,
        // the waiting records and their categories, which point at each other, would leak.)
        for index in model.line + Array(model.granted.union(model.offered)) {
            machine.release(id(index))
            _ = machine.takeTurns()
        }
        #expect(machine.waiting(in: "c").isEmpty)
        #expect(machine.permitsInUse(of: "c") == model.lockFree.count)
    }

    @Test func aRetiredCategoryIsRevivedWhenItsDeclarationAsksAgain() {
        var machine = LimitStateMachine()
        let spec = OpLimit.Spec(permits: 2, interval: nil)
        let first = machine.declare("r", spec)
        let other = machine.declare("r", OpLimit.Spec(permits: 3, interval: nil))   // replaces the unused entry
        #expect(first.isRetired && !other.isRetired)
        #expect(!first.takeWithoutLock(), "a retired category sends its operations to the table")
        let token = Token()
        let outcome = machine.request(LimitStateMachine.Request(
            operation: ObjectIdentifier(token), limits: [OpLimit(category: "r", spec: spec, clock: nil, bound: first)],
            sequence: 0, grantsAtTurn: false))
        #expect(outcome == .granted(startsIntervals: true))
        #expect(!first.isRetired && other.isRetired, "the asking declaration's category is the entry again")
        #expect(machine.dropGrantedRecord(of: ObjectIdentifier(token)) === first)
        #expect(first.takeWithoutLock(), "its next operation takes a permit without the table")
        #expect(machine.permitsInUse(of: "r") == 2)
    }

    @Test func entriesNotInUseAreSweptAsTheTableGrows() {
        var machine = LimitStateMachine()
        let spec = OpLimit.Spec(permits: 2, interval: nil)
        let kept = machine.declare("kept", spec)
        #expect(kept.takeWithoutLock())
        for index in 0..<1_000 {
            _ = machine.declare("name-\(index)", spec)
        }
        #expect(machine.entryCount <= 130, "\(machine.entryCount) entries kept for one category in use")
        #expect(!kept.isRetired && machine.permitsInUse(of: "kept") == 1, "an entry in use is never swept")
        #expect(kept.giveBackWithoutLock())
    }
}
