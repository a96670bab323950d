import Testing
@testable import Operations

/// The task of an `async` body is named after its operation: `Task.name` inside the body is the
/// operation's `name`, and `nil` for an operation without one.
@Suite struct TaskNameTests {
    @Test func theTaskOfAnAsyncOpIsNamedAfterTheOperation() async {
        let seen = LockedBox<String?>("unset")
        let op = AsyncOp { seen.withLockedValue { $0 = Task.name } }
        op.name = "sync contacts"
        let queue = OpQueue()
        queue.addOperation(op)
        #expect(await eventuallyAsync { op.isFinished })
        #expect(seen.withLockedValue { $0 } == "sync contacts")
    }

    @Test func theTaskOfAnAsyncBlockOpIsNamedAfterTheOperation() async throws {
        let op = AsyncBlockOp<String?> { Task.name }
        op.name = "fetch avatar"
        let queue = OpQueue()
        queue.addOperation(op)
        #expect(try await op.value == "fetch avatar")
    }

    @Test func theTaskOfAnUnnamedOperationHasNoName() async {
        let seen = LockedBox<String?>("unset")
        let queue = OpQueue()
        queue.addOperation { seen.withLockedValue { $0 = Task.name } }
        #expect(await eventuallyAsync { seen.withLockedValue { $0 } != "unset" })
        #expect(seen.withLockedValue { $0 } == nil)
    }
}
