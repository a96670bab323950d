/// Releases long chains of objects iteratively instead of recursively.
///
/// An operation keeps its dependencies alive, so releasing the last operation of a chain of
/// 100,000 would run 100,000 nested `deinit`s and overflow the stack. Instead, a dying operation
/// hands its dependencies to the trampoline of its thread (kept in the ``ThreadContext``): the
/// outermost `deinit` releases them one at a time, and the `deinit`s that this triggers only add
/// their own dependencies to the list. No living object is touched, so nothing races with other
/// threads.
enum ReleaseTrampoline {
    /// Releases `objects` (emptying the list, so that the trampoline holds the only references)
    /// on the calling thread, iteratively.
    static func release(_ objects: inout SmallList<Op>) {
        guard !objects.isEmpty else { return }
        let context = ThreadContext.current
        objects.moveAll(into: &context.pointee.pendingReleases)
        if context.pointee.isReleasing { return }   // an outer deinit on this thread releases them
        context.pointee.isReleasing = true
        while let object = context.pointee.pendingReleases.popLast() {
            _ = object   // released here; its deinit may append to `pendingReleases`
        }
        context.pointee.isReleasing = false
    }
}
