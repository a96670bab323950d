import Testing
@testable import Operations

#if canImport(Glibc)
/// glibc's usable size of a heap block (declared in `malloc.h`, which the Glibc module leaves out).
@_silgen_name("malloc_usable_size")
private func mallocUsableSize(_ pointer: UnsafeMutableRawPointer) -> Int
#endif

/// A million pending operations is one of the benchmarks: the parts of an operation keep the
/// sizes its layout was made for (a `BlockOp` of 88 bytes on 64-bit platforms).
@Suite struct PendingOperationSizeTests {
    @Test func theStateMachineLeavesTheOperationsOneByteFieldsRoomBeforeTheSerialNumber() {
        // 16 bytes of object header, the machine, three one-byte fields: 48, where the serial
        // number starts.
        #expect(MemoryLayout<OpStateMachine>.size <= 29)
    }

    #if canImport(Glibc)
    /// The whole object, as the heap sees it: an 88-byte `BlockOp` fits glibc's 96-byte blocks
    /// (88 usable bytes); a field that pushes it past 88 costs 16 bytes per operation, the next
    /// size class (104 usable). The parts' checks above do not see a field added beside them.
    ///
    /// The smallest of several: a heap that other tests fragmented may hand one allocation a free
    /// block slightly larger than asked for, when the rest would be too small to split off.
    @Test func aPendingBlockOpFitsTheHeapBlockItsLayoutWasMadeFor() {
        let operations = (0..<16).map { _ in BlockOp {} }
        let usable = operations.map { mallocUsableSize(Unmanaged.passUnretained($0).toOpaque()) }
        #expect(usable.min()! <= 88, "a BlockOp takes \(usable.min()!) usable bytes (all: \(usable))")
    }

    /// An operation with dependencies or dependents has a `Links` object beside it: one per link
    /// of a chain, one per operation of a graph. It fits glibc's 96-byte blocks (88 usable bytes);
    /// it took 128-byte blocks while each list kept its long representation inline.
    @Test func aLinksObjectFitsTheHeapBlockItsLayoutWasMadeFor() {
        let links = (0..<16).map { _ in OpStateMachine.Links() }
        let usable = links.map { mallocUsableSize(Unmanaged.passUnretained($0).toOpaque()) }
        #expect(usable.min()! <= 88, "a Links object takes \(usable.min()!) usable bytes (all: \(usable))")
    }
    #endif

    /// The two lists of a `Links` object: each keeps its long representation behind one
    /// reference, and the dependency list leaves its last four bytes to the field after it.
    @Test func theDependencyListsKeepTheirLongFormBehindOneReference() {
        #expect(MemoryLayout<DependencyList>.size <= 28)
        #expect(MemoryLayout<DependentList>.size <= 32)
    }

    @Test func theQueuesFieldsTakeSixteenBytes() {
        #expect(MemoryLayout<Op.QueueMembership>.stride <= 16)
    }

    @Test func aBlockOpStoresOneClosure() {
        #expect(MemoryLayout<(@Sendable () -> Void)?>.size == 16)
    }

    /// The state machine reads its lifecycle and gate back from two bits each by reinterpreting
    /// them: that holds only while each enum is one byte whose value is its raw value.
    @Test func theLifecycleAndTheGateAreStoredAsTheirRawValues() {
        #expect(MemoryLayout<OpStateMachine.Lifecycle>.size == 1 && MemoryLayout<OpStateMachine.Gate>.size == 1)
        // Two bits each: four cases at most.
        #expect(OpStateMachine.Lifecycle.allCases.count <= 4 && OpStateMachine.Gate.allCases.count <= 4)
        for lifecycle in OpStateMachine.Lifecycle.allCases {
            #expect(unsafeBitCast(lifecycle, to: UInt8.self) == lifecycle.rawValue)
            #expect(lifecycle.rawValue <= 0b11)
        }
        for gate in OpStateMachine.Gate.allCases {
            #expect(unsafeBitCast(gate, to: UInt8.self) == gate.rawValue)
            #expect(gate.rawValue <= 0b11)
        }
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
