#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An unretained, per-thread pointer slot over a pthread key, for tests that mark threads.
///
/// The stored object must outlive the scope that sets it; ``ThreadLocal/withValue(_:_:)``
/// guarantees that by holding a strong reference for the duration.
final class ThreadLocal<Object: AnyObject>: Sendable {
    private let key: pthread_key_t

    init() {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        self.key = key
    }

    /// The object stored for the calling thread, if any.
    var value: Object? {
        guard let raw = pthread_getspecific(key) else { return nil }
        return Unmanaged<Object>.fromOpaque(raw).takeUnretainedValue()
    }

    /// Runs `body` with `object` stored for the calling thread, restoring the previous value after.
    @inline(__always)
    func withValue<Result>(_ object: Object?, _ body: () throws -> Result) rethrows -> Result {
        let previous = pthread_getspecific(key)
        let raw = object.map { UnsafeRawPointer(Unmanaged.passUnretained($0).toOpaque()) }
        pthread_setspecific(key, raw)
        defer {
            pthread_setspecific(key, previous)
            withExtendedLifetime(object) {}
        }
        return try body()
    }
}
