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

/// What the library remembers per thread: one context for each thread, found with a C
/// thread-local load on Linux, and freed by a key destructor when the thread exits
/// (AddressSanitizer's leak check sees a context that is not).
@Suite struct ThreadContextTests {
    @Test func aThreadFindsTheSameContextEachTime() {
        let first = ThreadContext.current
        #expect(ThreadContext.current == first)
        #if os(Linux)
        #expect(operations_thread_context() == UnsafeMutableRawPointer(first))
        #endif
    }

    @Test func eachThreadHasAContextOfItsOwn() {
        let here = UInt(bitPattern: ThreadContext.current)
        let there = LockedBox<(before: UInt, context: UInt, again: UInt)>((1, 0, 0))
        runOnNewThread {
            #if os(Linux)
            let before = UInt(bitPattern: operations_thread_context())   // none until needed
            #else
            let before: UInt = 0
            #endif
            let context = UInt(bitPattern: ThreadContext.current)
            let again = UInt(bitPattern: ThreadContext.current)
            there.withLockedValue { $0 = (before, context, again) }
        }
        let (before, context, again) = there.withLockedValue { $0 }
        #expect(before == 0)
        #expect(context != 0 && context == again && context != here)
    }

    @Test func shortLivedThreadsEachUseAContextOfTheirOwn() {
        // Each thread makes its context, uses it, and exits (its key destructor frees it: the
        // sanitizer stage's leak check would report one that is not).
        for _ in 0..<200 {
            runOnNewThread {
                let op = BlockOp {}
                ThreadContext.withOperation(op) {
                    #expect(ThreadContext.current.pointee.operation?.takeUnretainedValue() === op)
                }
            }
        }
        #expect(ThreadContext.current.pointee.operation == nil)
    }
}
