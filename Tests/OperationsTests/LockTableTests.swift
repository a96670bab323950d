#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
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
        let first = UInt(bitPattern: operations_stripe_mutex(0))
        #expect(first % 64 == 0)
        #expect(UInt(bitPattern: operations_stripe_mutex(1)) - first == 64)
    }

    @Test func stripesOfObjectsAreInTheTable() {
        for _ in 0..<1_000 {
            let stripe = LockTable.stripe(for: BlockOp {})
            #expect(stripe >= 0 && stripe < LockTable.count)
        }
    }

    @Test func everyStripeExcludesOtherThreadsWhileHeld() {
        for stripe in 0..<LockTable.count {
            LockTable.lock(stripe)
            // Tried from another thread: the stripe is busy.
            let busy = DispatchQueue.global().sync { pthread_mutex_trylock(operations_stripe_mutex(stripe)) }
            LockTable.unlock(stripe)
            #expect(busy == EBUSY, "stripe \(stripe)")
            // Free again once released.
            let free = DispatchQueue.global().sync {
                let code = pthread_mutex_trylock(operations_stripe_mutex(stripe))
                if code == 0 { pthread_mutex_unlock(operations_stripe_mutex(stripe)) }
                return code
            }
            #expect(free == 0, "stripe \(stripe)")
        }
    }

    @Test func twoStripesAreTakenOnceEachWhateverTheirOrder() {
        let result = LockTable.withLocks(7, 3) { 42 }
        #expect(result == 42)
        let same = LockTable.withLocks(5, 5) { "once" }   // a shared stripe is locked once
        #expect(same == "once")
        // Both free afterwards.
        for stripe in [3, 5, 7] {
            #expect(pthread_mutex_trylock(operations_stripe_mutex(stripe)) == 0)
            pthread_mutex_unlock(operations_stripe_mutex(stripe))
        }
    }
}
