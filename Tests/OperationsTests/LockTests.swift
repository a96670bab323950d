import Dispatch
import Testing
@testable import Operations
import OperationsRuntimeShims

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The library's lock (`Lock`, and the stripes of `LockTable`, both over the shim's
/// `operations_lock`): on Linux a futex word the library implements itself, so its mutual
/// exclusion, its sleeping path and its debug checks are tested here rather than trusted.
@Suite(.offTheCooperativePool) struct LockTests {
    /// Counts inside the lock without atomics: only mutual exclusion keeps the count exact.
    final class Counter: @unchecked Sendable {
        // @unchecked Sendable: every access is made with `lock` held; that is what is tested.
        let lock = Lock()
        var count = 0
        var holders = 0
        var mostHoldersAtOnce = 0
    }

    @Test func threadsThatContendNeverHoldTheLockTogether() {
        let counter = Counter()
        let threads = 4
        let rounds = 20_000
        let done = DispatchSemaphore(value: 0)
        for thread in 0..<threads {
            let started = WorkerPool.shared.startThread {
                for round in 0..<rounds {
                    counter.lock.withLock {
                        counter.holders += 1
                        counter.mostHoldersAtOnce = max(counter.mostHoldersAtOnce, counter.holders)
                        counter.count += 1
                        // Now and then held long enough that the others stop spinning and sleep.
                        if round % 2_000 == thread { usleep(200) }
                        counter.holders -= 1
                    }
                }
                done.signal()
            }
            #expect(started)
        }
        for _ in 0..<threads { done.wait() }
        counter.lock.withLock {
            #expect(counter.count == threads * rounds)
            #expect(counter.mostHoldersAtOnce == 1)
        }
    }

    #if os(Linux)
    /// A thread that waits past its spinning marks the lock contended and sleeps in the kernel;
    /// giving the lock back wakes it. (Without the wake, it would sleep for ever.)
    @Test func aThreadAsleepOnTheLockIsWokenWhenItIsGivenBack() {
        let lock = RawLock()
        Lock.lock(lock.raw)
        let acquired = LockedBox(false)
        let started = WorkerPool.shared.startThread {
            Lock.lock(lock.raw)
            acquired.withLockedValue { $0 = true }
            Lock.unlock(lock.raw)
        }
        #expect(started)
        // 2: held, and a thread may be asleep waiting. Its spinning ends within microseconds.
        #expect(eventually { operations_lock_state(lock.raw) == 2 })
        #expect(!acquired.withLockedValue { $0 })
        Lock.unlock(lock.raw)
        #expect(eventually { acquired.withLockedValue { $0 } })
        // The thread that took it after sleeping kept the mark (another might still sleep), so its
        // own unlock made one needless wake-up call; the lock is free afterwards.
        #expect(eventually { operations_lock_trylock(lock.raw) == 0 })
        Lock.unlock(lock.raw)
        #expect(operations_lock_state(lock.raw) == 0)
    }

    /// An uncontended lock never gets the contended mark, so giving it back makes no system call.
    @Test func anUncontendedLockStaysOffTheKernelsPath() {
        let lock = RawLock()
        for _ in 0..<1_000 {
            Lock.lock(lock.raw)
            #expect(operations_lock_state(lock.raw) == 1)
            Lock.unlock(lock.raw)
        }
        #expect(operations_lock_state(lock.raw) == 0)
    }

    /// A lock in memory of its own, reached through its raw pointer.
    final class RawLock: @unchecked Sendable {
        // @unchecked Sendable: the lock is only touched through the shim's thread-safe functions.
        let raw = UnsafeMutablePointer<operations_lock>.allocate(capacity: 1)
        init() { operations_lock_init(raw) }
        deinit { raw.deallocate() }
    }
    #endif

    #if DEBUG
    @Test(.oneExitTestAtATime) func takingALockTwiceOnOneThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = Lock()
            lock.lock()
            lock.lock()
        }
        expectStandardError(of: result, toContain: ["took a lock it holds already"])
    }

    @Test(.oneExitTestAtATime) func givingBackALockThatIsNotHeldTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = Lock()
            lock.unlock()
        }
        expectStandardError(of: result, toContain: ["gave back a lock it does not hold"])
    }
    #endif
}

