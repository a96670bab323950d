#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
@testable import Operations
import OperationsRuntimeShims
import Testing

/// The stripe locks that guard every operation's state: a table the C shim initializes
/// statically, which the Swift side indexes by its own count.
@Suite struct LockTableTests {
    @Test func theSwiftSideIndexesExactlyTheStripesOfTheCTable() {
        #expect(LockTable.count == Int(OPERATIONS_STRIPE_COUNT))
        #expect(LockTable.count.nonzeroBitCount == 1)
        // Each stripe alone on a cache line.
        #expect(operations_stripe_stride() == 64)
        let first = UInt(bitPattern: operations_stripe_lock(0))
        #expect(first % 64 == 0)
        #expect(UInt(bitPattern: operations_stripe_lock(1)) - first == 64)
    }

    // Stripes are shared by every operation of the process, and other tests run meanwhile: a
    // stripe found busy after its release may be another operation's, so only "busy while this
    // thread holds it" is checked.

    @Test func everyStripeExcludesOtherThreadsWhileHeld() {
        for stripe in 0..<LockTable.count {
            LockTable.lock(stripe)
            // Tried from another thread: the stripe is busy.
            let busy = LockedBox<Int32>(0)
            runOnNewThread { busy.withLockedValue { $0 = operations_lock_trylock(operations_stripe_lock(stripe)) } }
            LockTable.unlock(stripe)
            #expect(busy.withLockedValue { $0 } == EBUSY, "stripe \(stripe)")
        }
    }

    @Test func twoStripesAreHeldTogetherWhateverTheirOrder() {
        let busy = LockedBox<[Int32]>([])
        LockTable.withLocks(7, 3) {
            runOnNewThread { busy.withLockedValue { $0 = [3, 7].map { operations_lock_trylock(operations_stripe_lock($0)) } } }
        }
        #expect(busy.withLockedValue { $0 } == [EBUSY, EBUSY])
        // A shared stripe is locked once (twice would deadlock, or trap in a debug build).
        let same = LockTable.withLocks(5, 5) { "once" }
        #expect(same == "once")
    }
}
