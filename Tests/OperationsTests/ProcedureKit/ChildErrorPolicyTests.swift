import Testing
@testable import Operations

private struct NotModified: Error {}
private struct Broken: Error, Equatable {
    let id: Int
}

/// `GroupOp.childErrorPolicy`: a group decides what a child's failure counts for.
@Suite struct ChildErrorPolicyTests {
    private static func failing(_ error: any Error) -> ResultOp<Int> {
        ResultOp { throw error }
    }

    @Test func byDefaultAChildsErrorFailsTheGroup() async {
        let group = GroupOp(operations: [Self.failing(Broken(id: 1)), BlockOp {}])
        await OpQueue().addOperations([group], waitUntilFinished: true)
        #expect((group.error as? GroupError)?.errors.count == 1)
    }

    @Test func ignoredErrorsLeaveTheGroupSucceedingAndTheChildFailed() async {
        let child = Self.failing(Broken(id: 2))
        let group = GroupOp(operations: [child, BlockOp {}])
        group.childErrorPolicy = .ignore
        await OpQueue().addOperations([group], waitUntilFinished: true)
        #expect(group.error == nil && !group.isCancelled)
        #expect(child.error as? Broken == Broken(id: 2), "the child keeps its error")
    }

    @Test func aTransformRecoversFromExpectedFailuresAndRenamesOthers() async {
        let seen = EventLog<String>()
        let unchanged = Self.failing(NotModified())
        let broken = Self.failing(Broken(id: 3))
        let group = GroupOp(operations: [unchanged, broken])
        group.maxConcurrentOperationCount = 1
        group.childErrorPolicy = .transform { child, error in
            seen.append(child === unchanged ? "unchanged" : "broken")
            if error is NotModified { return nil }
            return Broken(id: 30)
        }
        await OpQueue().addOperations([group], waitUntilFinished: true)
        #expect(Set(seen.all) == ["unchanged", "broken"])
        let errors = (group.error as? GroupError)?.errors ?? []
        #expect(errors.count == 1 && errors.first as? Broken == Broken(id: 30))
    }

    @Test func anIgnoredFailureDoesNotCancelTheOtherChildren() async {
        let gate = Gate()
        let slow = BlockOp { gate.wait() }
        let group = GroupOp(operations: [Self.failing(NotModified()), slow])
        group.cancelsChildrenOnFailure = true
        group.childErrorPolicy = .transform { _, error in error is NotModified ? nil : error }
        OpQueue().addOperation(group)
        #expect(await eventuallyAsync { group.children.count == 1 })
        #expect(!slow.isCancelled)
        gate.open()
        #expect(await eventuallyAsync { group.isFinished })
        #expect(group.error == nil)
    }
}
