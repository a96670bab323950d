import Testing
@testable import Operations

/// How an operation lists the dependents it holds back.
@Suite struct DependentListTests {
    @Test func dependentsAreListedInOrderAndRemovedByTheirSerialNumber() {
        let operations = (0..<5).map { _ in BlockOp {} }
        var list = DependentList()
        for operation in operations { list.append(DependentLink(operation)) }
        #expect(list.count == 5 && list.serials == operations.map(\.serial))
        let removed = list.remove(serial: operations[2].serial)
        let removedAgain = list.remove(serial: operations[2].serial)
        #expect(removed && !removedAgain)
        #expect(list.serials == [0, 1, 3, 4].map { operations[$0].serial })
        #expect(list.contains(operations[3]) && !list.contains(operations[2]))
    }

    @Test func aLongListRemovesThroughItsIndexAndCompacts() {
        let operations = (0..<200).map { _ in BlockOp {} }
        var list = DependentList()
        for operation in operations { list.append(DependentLink(operation)) }
        // Every other one goes, in the order a fan-out released as a whole would go.
        for operation in operations.enumerated().filter({ $0.offset % 2 == 0 }).map(\.element) {
            let removed = list.remove(serial: operation.serial)
            #expect(removed)
        }
        #expect(list.count == 100)
        #expect(list.serials == operations.enumerated().filter { $0.offset % 2 == 1 }.map(\.element.serial))
        let removedAgain = list.remove(serial: operations[0].serial)
        #expect(!removedAgain)
        var seen: [UInt64] = []
        list.removeAll { operation, serial in
            #expect(operation?.serial == serial)
            seen.append(serial)
        }
        #expect(seen == operations.enumerated().filter { $0.offset % 2 == 1 }.map(\.element.serial))
        #expect(list.isEmpty)
    }

    @Test func removingAllPassesEachListedDependentRetainedAndEmptiesTheList() {
        let kept = (BlockOp {}, BlockOp {})
        var list = DependentList()
        list.append(DependentLink(kept.0))
        list.append(DependentLink(kept.1))
        var seen: [(Op?, UInt64)] = []
        list.removeAll { seen.append(($0, $1)) }
        #expect(list.isEmpty)
        #expect(seen.map(\.1) == [kept.0.serial, kept.1.serial])
        #expect(seen[0].0 === kept.0 && seen[1].0 === kept.1)
        var calls = 0
        list.removeAll { _, _ in calls += 1 }
        #expect(calls == 0)
    }

    @Test func dependentsReleasedBeforeALargeFanOutFinishesLeaveItsListAndAreNeverTouched() {
        let dependency = BlockOp {}
        var kept: [BlockOp] = []
        do {
            var dropped: [BlockOp] = []
            for index in 0..<100 {
                let dependent = BlockOp {}
                dependent.addDependency(dependency)
                if index % 4 == 0 { kept.append(dependent) } else { dropped.append(dependent) }
            }
            #expect(dependency.withState { $0.dependents.count } == 100)
        }
        #expect(dependency.withState { $0.dependents.count } == kept.count)
        dependency.start()
        #expect(kept.allSatisfy { $0.isReady })
    }
}
