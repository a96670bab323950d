import Testing
@testable import Operations

/// The narrowed counters and thresholds of ``NarrowedCounters`` (issue 22, the checked build):
/// tiny in the checked build, so that these tests (and the whole suite) drive each of them through
/// wrap-around, compaction and spilling; and every one of them is read from that one place.
@Suite struct NarrowedCountersTests {
    @Test func everyNarrowedCounterIsTinyInTheCheckedBuildAndReadFromOnePlace() {
        #if OPERATIONS_INTERNAL_CHECKS || OPERATIONS_TINY_COUNTERS
        #expect(NarrowedCounters.areTiny)
        #expect(NarrowedCounters.ticketBits <= 4 && NarrowedCounters.dependencyVersionBits <= 4)
        #expect(NarrowedCounters.memberListSlack <= 4 && NarrowedCounters.epochCountsSlack <= 4)
        #expect(NarrowedCounters.heldListSlack <= 4 && NarrowedCounters.ringBufferMinimumCapacity <= 4)
        #expect(NarrowedCounters.dependentListIndexThreshold <= 4 && NarrowedCounters.dependencySetThreshold <= 4)
        #else
        #expect(!NarrowedCounters.areTiny)
        #expect(NarrowedCounters.ticketBits == 16 && NarrowedCounters.dependencyVersionBits == 32)
        #expect(NarrowedCounters.dependentListIndexThreshold == 16 && NarrowedCounters.dependencySetThreshold == 16)
        #endif
        #expect(Int(Op.ticketMask) == (1 << NarrowedCounters.ticketBits) - 1)
        #expect(NarrowedCounters.ticketBits <= Op.Ticket.bitWidth)
        #expect(NarrowedCounters.dependencyVersionBits <= UInt32.bitWidth)
        #expect(DependentList.indexThreshold == NarrowedCounters.dependentListIndexThreshold)
        #expect(OpStateMachine.dependencySetThreshold == NarrowedCounters.dependencySetThreshold)
    }

    // MARK: The dependency-list version

    /// How many changes bring the version back where it was (2^32 in a normal build: too many
    /// for a test, which then checks that the changes count).
    private static var versionRange: Int { 1 << NarrowedCounters.dependencyVersionBits }

    @Test func theDependencyVersionWrapsAndCountsEveryChange() {
        let operation = BlockOp {}
        let other = BlockOp {}
        let changes = min(2 * Self.versionRange + 3, 1_001)
        var expected: UInt32 = 0
        for change in 0..<changes {
            if change.isMultiple(of: 2) { operation.addDependency(other) } else { operation.removeDependency(other) }
            expected = NarrowedCounters.nextDependencyVersion(after: expected)
            #expect(operation.withState { $0.dependencyVersion } == expected)
        }
        #expect(Int(expected) == changes % min(Self.versionRange, Int(UInt32.max)))
    }

    @Test func aCycleIsFoundAndABrokenOneIsNotAfterTheDependencyVersionsWrapped() {
        let a = BlockOp {}, b = BlockOp {}, unrelated = BlockOp {}
        // Wrap a's and b's versions (twice over in the checked build).
        for _ in 0..<min(2 * Self.versionRange + 1, 1_001) {
            a.addDependency(unrelated)
            a.removeDependency(unrelated)
            b.addDependency(unrelated)
            b.removeDependency(unrelated)
        }
        b.addDependency(a)
        a.addDependency(b)
        let cycle = DependencyCycle(path: [a, b], barrierEdges: [false, false])
        #expect(cycle.isIntact())
        a.removeDependency(b)
        #expect(!cycle.isIntact())
        a.addDependency(b)
        #expect(cycle.isIntact())
        a.removeDependency(b)   // no cycle is left behind
        b.removeDependency(a)
    }

    // MARK: Thresholds

    /// Counts on either side of `threshold`, and well past it.
    private static func around(_ threshold: Int) -> [Int] {
        Array(Set([1, threshold - 1, threshold, threshold + 1, 2 * threshold + 3, 40].filter { $0 > 0 })).sorted()
    }

    @Test func aDependencyReleasesEachOfItsDependentsOnceOnEitherSideOfTheIndexThreshold() {
        for count in Self.around(NarrowedCounters.dependentListIndexThreshold) {
            let queue = OpQueue()
            queue.isSuspended = true
            let log = EventLog<Int>()
            let dependency = BlockOp { log.append(-1) }
            let dependents = (0..<count).map { index in BlockOp { log.append(index) } }
            for dependent in dependents { dependent.addDependency(dependency) }
            // Every third one stops waiting (through the index once there are enough).
            for index in stride(from: 0, to: count, by: 3) { dependents[index].removeDependency(dependency) }
            queue.addOperations(dependents, waitUntilFinished: false)
            queue.isSuspended = false
            for index in stride(from: 0, to: count, by: 3) { dependents[index].waitUntilFinished() }
            #expect(!log.all.contains(-1), "\(count) dependents")
            dependency.start()
            queue.waitUntilAllOperationsAreFinished()
            let entries = log.all
            #expect(entries.count == count + 1 && Set(entries).count == count + 1, "\(count) dependents: \(entries)")
            let released = entries.drop { $0 != -1 }
            #expect(Set(released.dropFirst()) == Set((0..<count).filter { !$0.isMultiple(of: 3) }), "\(count) dependents: \(entries)")
        }
    }

    @Test func anOperationTellsItsDependenciesApartOnEitherSideOfTheSetThreshold() {
        for count in Self.around(NarrowedCounters.dependencySetThreshold) {
            let operation = BlockOp {}
            let dependencies = (0..<count).map { _ in BlockOp {} }
            for dependency in dependencies { operation.addDependency(dependency) }
            for dependency in dependencies { operation.addDependency(dependency) }   // already there: ignored
            #expect(operation.dependencies.map(ObjectIdentifier.init) == dependencies.map(ObjectIdentifier.init), "\(count)")
            for index in stride(from: 0, to: count, by: 2) { operation.removeDependency(dependencies[index]) }
            let remaining = dependencies.indices.filter { !$0.isMultiple(of: 2) }.map { dependencies[$0] }
            #expect(operation.dependencies.map(ObjectIdentifier.init) == remaining.map(ObjectIdentifier.init), "\(count)")
            #expect(operation.isReady == remaining.isEmpty)
            for dependency in remaining { dependency.start() }
            #expect(operation.isReady, "\(count)")
        }
    }
}
