// De-duplication of identical work in flight: operations added with the same key share one run.

extension OpQueue {
    /// Adds `operation` unless an unfinished operation added with the same `key` is in the queue,
    /// and returns the operation that does the work, so that identical requests in flight share
    /// one run (as image loaders do for downloads of the same URL).
    ///
    /// ```swift
    /// func image(at url: URL) async throws -> Image {
    ///     let download = downloads.addOperation(DownloadOp(url), coalescingKey: url.absoluteString)
    ///     return try await download.value   // every caller awaits the same download
    /// }
    /// ```
    ///
    /// - With ``Coalescing/joinExisting`` (the default): if an unfinished operation of `key` is in
    ///   the queue, waiting or running, `operation` is not added (it is left untouched) and that
    ///   one is returned; otherwise `operation` is added and returned.
    /// - With ``Coalescing/replacePending``: an operation of `key` that has not started is
    ///   cancelled (one that runs is left to finish), and `operation` is added and returned.
    ///
    /// A key is free again once its operation finishes. Keys belong to this queue: other queues
    /// may use the same ones. The add is a Foundation-style add otherwise: it is not held back by
    /// ``maxPendingOperationCount``, and a closed queue turns `operation` away (see ``close()``).
    ///
    /// - Important: An operation of `key` in the queue whose type is not `O` (two kinds of work
    ///   under one key) is a programmer error and traps, naming the key and both types; so is
    ///   adding an operation that is in a queue already, executing or finished.
    @discardableResult
    public func addOperation<O: Op>(_ operation: O, coalescingKey key: String, policy: Coalescing = .joinExisting) -> O {
        // The operation that holds the key, if it is to be joined or is of the wrong type; the
        // one to cancel, if it is replaced before it started.
        let (holder, replaced): (Op?, Op?) = withLock {
            if let existing = coalescing.operation(for: key), existing !== operation, !existing.isFinished {
                guard existing is O, policy == .replacePending else { return (existing, nil) }
                coalescing.record(operation, for: key)
                return (nil, existing.isExecuting ? nil : existing)
            }
            coalescing.record(operation, for: key)
            return (nil, nil)
        }
        if let holder {
            guard let joined = holder as? O else {
                misuse("addOperation(_:coalescingKey:) was called on \(self) with key \"\(key)\" and \(operation) of type \(O.self), but \(holder) of type \(type(of: holder)) holds that key. One key names one kind of work: use another key (add the type to it, say).")
            }
            return joined
        }
        replaced?.cancel()
        addOperation(operation)
        return operation
    }

    /// The number of coalescing keys the queue keeps (for tests: they go as their operations leave).
    final var coalescingKeyCount: Int {
        withLock { coalescing.count }
    }
}
