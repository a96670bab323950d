// Chaining: one operation after another, written in the order they run.

extension Op {
    /// Makes `next` depend on this operation, and returns it: a chain reads in the order its
    /// operations run (ProcedureKit's `then(do:)`).
    ///
    /// ```swift
    /// let fetch = BlockOp { download() }
    /// let parse = BlockOp { parse() }
    /// let store = BlockOp { save() }
    /// fetch.then(do: parse).then(do: store)
    /// queue.addOperations([fetch, parse, store], waitUntilFinished: false)
    /// ```
    ///
    /// It adds a dependency, nothing else: add the operations to a queue yourself (or with
    /// `enqueue(on:)`), and add conditions such as
    /// ``OpCondition/noFailedDependencies`` if `next` should not run after a failure.
    @discardableResult
    public final func then<Next: Op>(do next: Next) -> Next {
        next.addDependency(self)
        return next
    }

    /// Makes every operation of `nexts` depend on this operation, and returns them: a fan-out
    /// (see ``then(do:)-(Next)``).
    @discardableResult
    public final func then<Nexts: Sequence>(do nexts: Nexts) -> Nexts where Nexts.Element: Op {
        for next in nexts { next.addDependency(self) }
        return nexts
    }
}

extension Sequence where Element: Op {
    /// Makes `next` depend on every operation of the sequence, and returns it: a fan-in.
    ///
    /// ```swift
    /// let thumbnails = photos.map { photo in BlockOp { render(photo) } }
    /// let album = BlockOp { publish() }
    /// thumbnails.then(do: album)
    /// (thumbnails + [album]).enqueue(on: queue)
    /// ```
    @discardableResult
    public func then<Next: Op>(do next: Next) -> Next {
        for operation in self { next.addDependency(operation) }
        return next
    }

    /// Adds the operations to `queue` in one go, without waiting for them
    /// (``OpQueue/addOperations(_:waitUntilFinished:)`` with `false`), and returns them.
    @discardableResult
    public func enqueue(on queue: OpQueue) -> [Element] {
        let operations = Array(self)
        queue.addOperations(operations, waitUntilFinished: false)
        return operations
    }
}
