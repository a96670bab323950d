#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `body` on a new thread of its own (not one of a pool, which may be the caller's own
/// thread), and waits for that thread to exit.
func runOnNewThread(_ body: @escaping @Sendable () -> Void) {
    final class Box: @unchecked Sendable {
        // @unchecked Sendable: written before the thread starts, read by that thread only.
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
    precondition(code == 0, "pthread_create failed with \(code)")
    #if canImport(Darwin)
    pthread_join(thread!, nil)
    #else
    pthread_join(thread, nil)
    #endif
}
