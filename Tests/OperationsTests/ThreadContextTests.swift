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
/// thread-local load, and given up when the thread exits.
@Suite struct ThreadContextTests {
    /// Runs `body` on a new thread of its own and waits for the thread to exit.
    private func onNewThread(_ body: @escaping @Sendable () -> Void) {
        final class Box: @unchecked Sendable {
            // @unchecked Sendable: written before the thread starts, read by it only.
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        let code = pthread_create(&thread, nil, { raw in
            #if canImport(Darwin)
            let box = Unmanaged<Box>.fromOpaque(raw).takeRetainedValue()
            #else
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            #endif
            box.body()
            return nil
        }, box)
        precondition(code == 0)
        #if canImport(Darwin)
        pthread_join(thread!, nil)
        #else
        pthread_join(thread, nil)
        #endif
    }

    @Test func aThreadFindsTheSameContextEachTime() {
        let first = ThreadContext.current
        #expect(ThreadContext.current == first)
        #expect(operations_thread_context() == UnsafeMutableRawPointer(first))
    }

    @Test func eachThreadHasAContextOfItsOwn() {
        let here = UInt(bitPattern: ThreadContext.current)
        let there = LockedBox<(before: UInt, context: UInt, again: UInt)>((1, 0, 0))
        onNewThread {
            let before = UInt(bitPattern: operations_thread_context())   // none until needed
            let context = UInt(bitPattern: ThreadContext.current)
            let again = UInt(bitPattern: ThreadContext.current)
            there.withLockedValue { $0 = (before, context, again) }
        }
        let (before, context, again) = there.withLockedValue { $0 }
        #expect(before == 0)
        #expect(context != 0 && context == again && context != here)
    }

    @Test func aThreadThatExitsGivesItsContextUp() {
        // The destructor frees each context: many short threads do not pile contexts up, and an
        // operation released while one exits still finds a context to release through.
        for _ in 0..<200 {
            onNewThread {
                let op = BlockOp {}
                ThreadContext.withOperation(op) {
                    #expect(ThreadContext.current.pointee.operation?.takeUnretainedValue() === op)
                }
            }
        }
        #expect(ThreadContext.current.pointee.operation == nil)
    }
}
