import Testing
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
@testable import Operations

@Suite struct OpLifecycleTests {
    @Test func newOperationIsReadyAndIdle() {
        let op = BlockOp {}
        #expect(op.isReady)
        #expect(!op.isExecuting)
        #expect(!op.isFinished)
        #expect(!op.isCancelled)
        #expect(!op.isAsynchronous)
        #expect(!op.isConcurrent)
        #expect(op.queuePriority == .normal)
        #expect(op.qualityOfService == .default)
        #expect(op.name == nil)
    }

    @Test func startRunsMainOnTheCallingThreadAndFinishes() {
        let caller = pthread_self()
        let ranOnCaller = LockedBox<Bool?>(nil)
        let op = RecordingOp { op in
            ranOnCaller.withLockedValue { $0 = pthread_equal(pthread_self(), caller) != 0 }
            #expect(op.isExecuting)
            #expect(!op.isFinished)
        }
        op.start()
        #expect(ranOnCaller.withLockedValue { $0 } == true)
        #expect(op.isFinished)
        #expect(!op.isExecuting)
    }

    @Test func cancelledOperationSkipsMainAndFinishes() {
        let ran = LockedBox(false)
        let op = RecordingOp { _ in ran.withLockedValue { $0 = true } }
        op.cancel()
        #expect(op.isCancelled)
        op.start()
        #expect(!ran.withLockedValue { $0 })
        #expect(op.isFinished)
        #expect(op.isCancelled)
    }

    @Test func startOnAFinishedOperationDoesNothing() {
        let runs = LockedBox(0)
        let op = RecordingOp { _ in runs.withLockedValue { $0 += 1 } }
        op.start()
        op.start()
        #expect(runs.withLockedValue { $0 } == 1)
        #expect(op.isFinished)
    }

    @Test func cancellingAFinishedOperationHasNoEffect() {
        let op = BlockOp {}
        op.start()
        op.cancel()
        #expect(!op.isCancelled)
        #expect(op.isFinished)
    }

    @Test func cancellationIsVisibleInsideTheRunningBody() {
        let started = Gate()
        let proceed = Gate()
        let sawCancellation = LockedBox(false)
        let op = RecordingOp { op in
            started.open()
            proceed.wait()
            sawCancellation.withLockedValue { $0 = op.isCancelled }
        }
        let queue = OpQueue()
        queue.addOperation(op)
        #expect(started.wait())
        op.cancel()
        #expect(op.isExecuting)
        proceed.open()
        op.waitUntilFinished()
        #expect(sawCancellation.withLockedValue { $0 })
        #expect(op.isFinished)
    }

    @Test func waitUntilFinishedReturnsAfterTheOperationFinished() {
        let queue = OpQueue()
        let op = BlockOp { blockThread(milliseconds: 20) }
        queue.addOperation(op)
        op.waitUntilFinished()
        #expect(op.isFinished)
    }

    @Test func waitUntilFinishedOnAFinishedOperationReturnsAtOnce() {
        let op = BlockOp {}
        op.start()
        op.waitUntilFinished()
        #expect(op.isFinished)
    }

    @Test func nameAndQualityOfServiceAreStored() {
        let op = BlockOp {}
        op.name = "thumbnail"
        op.qualityOfService = .userInitiated
        #expect(op.name == "thumbnail")
        #expect(op.qualityOfService == .userInitiated)
        #expect(op.description == "BlockOp \"thumbnail\"")
    }

    @Test func descriptionWithoutANameShowsTheAddress() {
        let op = BlockOp {}
        #expect(op.description.hasPrefix("BlockOp 0x"))
    }

    @Test func queuePriorityRawValuesMatchFoundation() {
        #expect(Op.QueuePriority.veryLow.rawValue == -8)
        #expect(Op.QueuePriority.low.rawValue == -4)
        #expect(Op.QueuePriority.normal.rawValue == 0)
        #expect(Op.QueuePriority.high.rawValue == 4)
        #expect(Op.QueuePriority.veryHigh.rawValue == 8)
        #expect(Op.QueuePriority(approximating: -10) == .veryLow)
        #expect(Op.QueuePriority(approximating: 10) == .veryHigh)
        #expect(Op.QueuePriority(approximating: 2) == .normal)
        #expect(Op.QueuePriority(approximating: -5) == .low)
        #expect(Op.QueuePriority(approximating: 6) == .high)
    }
}
