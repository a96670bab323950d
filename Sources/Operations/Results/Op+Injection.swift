// Injection: the value of a producer passed to a consumer before the consumer runs.

extension Op {
    /// Passes the value of `producer` to this operation before it runs.
    ///
    /// `producer` becomes a dependency. Once it has finished, and before this operation starts,
    /// `body` is called with this operation and the producer's value, typically to store the
    /// value where ``main()`` (or `execute()`) reads it:
    ///
    /// ```swift
    /// let fetch = AsyncBlockOp { try await client.download(url) }
    /// let parse = ParseFeed()
    /// parse.inject(from: fetch) { parse, data in parse.data = data }
    /// queue.addOperations([fetch, parse], waitUntilFinished: false)
    /// ```
    ///
    /// If the producer failed or was cancelled, `body` is not called: this operation is cancelled
    /// with an ``InjectionError`` carrying the producer's error, and its body does not run. If
    /// `body` throws, this operation is cancelled with that error.
    ///
    /// An operation may inject from many producers; the injections run in the order they were
    /// added, with the operation's conditions (see ``OpCondition``): on the thread that made the
    /// operation ready (or that added it to its queue, if it was ready then), or in a task if a
    /// condition is `async`. Keep `body` short; it runs once. `body` is skipped if the operation
    /// is cancelled by then (a failed producer still ends it with an ``InjectionError``, so the
    /// condition that decides does not depend on when the cancellation came); a cancellation
    /// that comes while `body` runs lets `body` finish, but the operation then finishes without
    /// running its body, possibly while `body` is still running: store the value in a way that
    /// does not race with the completion block.
    ///
    /// - Important: Like conditions, injections are added before the operation is added to a
    ///   queue or started; adding one later is a programmer error and traps.
    public final func inject<Producer: ProducesOutput>(
        from producer: Producer,
        _ body: @escaping @Sendable (Self, Producer.Output) throws -> Void
    ) {
        let isPending = withState { $0.queue == nil && $0.lifecycle == .pending }
        guard isPending else {
            misuse("inject(from:) was called on \(self) after it was added to a queue or started. Add injections before adding the operation to a queue.")
        }
        let consumerIdentity = ObjectIdentifier(self)
        let delivered = LockedBox(false)
        addCondition(OpCondition(name: "inject(from:)", kind: .injection { consumer in
            guard ObjectIdentifier(consumer) == consumerIdentity, let typed = consumer as? Self else {
                misuse("An injection from \(producer) was evaluated for \(consumer), which did not ask for it: its condition was copied from `conditions` to another operation. Call inject(from:_:) on every consumer.")
            }
            // A failed producer fails the injection even if the consumer was cancelled meanwhile:
            // which condition decides must not depend on when a cancellation came.
            let output = producer.output
            if case .failure(let error)? = output {
                return InjectionError(producer: producer.description, underlyingError: error)
            }
            // Cancelled meanwhile, the consumer will not run: the value is not needed. Evaluated
            // again (a dependency was added after the conditions passed), it is passed once.
            if consumer.isCancelled || delivered.withLockedValue({ $0 }) { return nil }
            guard case .success(let value)? = output else {
                misuse("\(consumer) was about to receive the value of \(producer), which has not finished: it is no longer a dependency. Keep a producer a dependency of the operations that inject from it.")
            }
            do {
                try body(typed, value)
                delivered.withLockedValue { $0 = true }
                return nil
            } catch {
                return error
            }
        }))
        addDependency(producer)
    }
}
