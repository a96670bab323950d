import Testing
@testable import Operations

/// A million pending operations is one of the benchmarks: the parts of an operation keep the
/// sizes its layout was made for (a `BlockOp` of 88 bytes on 64-bit platforms).
@Suite struct PendingOperationSizeTests {
    @Test func theStateMachineLeavesTheOperationsOneByteFieldsRoomBeforeTheSerialNumber() {
        // 16 bytes of object header, the machine, three one-byte fields: 48, where the serial
        // number starts.
        #expect(MemoryLayout<OpStateMachine>.size <= 29)
    }

    @Test func theQueuesFieldsTakeSixteenBytes() {
        #expect(MemoryLayout<Op.QueueMembership>.stride <= 16)
    }

    @Test func aBlockOpStoresOneClosure() {
        #expect(MemoryLayout<(@Sendable () -> Void)?>.size == 16)
    }

    @Test func theLifecycleAndTheGateShareAByteWithoutDisturbingEachOther() {
        var machine = OpStateMachine()
        #expect(machine.lifecycle == .pending && machine.gate == .open)
        let added = machine.addCondition(OpCondition.mutuallyExclusive("size test"))
        #expect(added)
        #expect(machine.lifecycle == .pending && machine.gate == .closed)
        let start = machine.startManually()
        #expect(start == .passGates)
        #expect(machine.lifecycle == .pending && machine.gate == .evaluating)
        _ = machine.cancel()
        #expect(machine.isCancelled && machine.lifecycle == .pending && machine.gate == .evaluating)
    }
}
