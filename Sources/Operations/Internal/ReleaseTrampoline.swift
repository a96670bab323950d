#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Releases long chains of objects iteratively instead of recursively.
///
/// An operation keeps its dependencies alive, so releasing the last operation of a chain of
/// 100,000 would run 100,000 nested `deinit`s and overflow the stack. Instead, a dying operation
/// hands its dependencies to the trampoline of its thread: the outermost `deinit` releases them
/// one at a time, and the `deinit`s that this triggers only add their own dependencies to the
/// list. No living object is touched, so nothing races with other threads.
final class ReleaseTrampoline {
    private var pending: [Op] = []
    private var isDraining = false

    private init() {}

    /// Releases `objects` (emptying the array, so that the trampoline holds the only references)
    /// on the calling thread, iteratively.
    static func release(_ objects: inout SmallList<Op>) {
        guard !objects.isEmpty else { return }
        let trampoline = current
        trampoline.pending.append(contentsOf: objects)
        objects = SmallList()
        if trampoline.isDraining { return }   // an outer deinit on this thread releases them
        trampoline.isDraining = true
        while let object = trampoline.pending.popLast() {
            _ = object   // released here; its deinit may append to `pending`
        }
        trampoline.isDraining = false
    }

    // MARK: Per-thread instance

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let code = pthread_key_create(&key) { raw in
            #if canImport(Darwin)
            Unmanaged<ReleaseTrampoline>.fromOpaque(raw).release()
            #else
            if let raw { Unmanaged<ReleaseTrampoline>.fromOpaque(raw).release() }
            #endif
        }
        precondition(code == 0, "Operations: pthread_key_create failed (\(code)); the process is out of thread-specific keys")
        return key
    }()

    private static var current: ReleaseTrampoline {
        if let raw = pthread_getspecific(key) {
            return Unmanaged<ReleaseTrampoline>.fromOpaque(raw).takeUnretainedValue()
        }
        let created = ReleaseTrampoline()
        pthread_setspecific(key, Unmanaged.passRetained(created).toOpaque())
        return created
    }
}
