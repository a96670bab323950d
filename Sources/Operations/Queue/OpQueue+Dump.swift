extension OpQueue: CustomDebugStringConvertible {
    /// A text picture of the queue now: each operation in it, its state, and, for each one that
    /// waits, exactly what holds it.
    ///
    /// ```swift
    /// print(queue.dump())
    /// ```
    /// ```
    /// OpQueue "downloads" (max concurrent: 2, suspended: no): 5 operations, 2 running
    ///   ▶ executing  BlockOp "fetch a.bin" (priority: normal)
    ///   ▶ executing  BlockOp "fetch b.bin" (priority: normal)
    ///   ⏸ waiting    BlockOp "parse a.bin" (priority: normal) — for dependencies: BlockOp "fetch a.bin" (executing)
    ///   ⏸ ready      BlockOp "fetch c.bin" (priority: high) — for a slot: 2 of 2 running
    ///   ⏸ ready      BlockOp 0x00007fb6440099b0 (priority: normal, barrier) — for 4 earlier operations to leave: BlockOp "fetch a.bin" (executing), …
    /// ```
    ///
    /// The format is stable and line-oriented, for reading and for `grep`:
    ///
    /// - The first line is the queue's ``description``, then `(max concurrent: N, suspended:
    ///   yes|no)` (`default` for ``defaultMaxConcurrentOperationCount``), then `: N operations,
    ///   R running`, where R counts the slots taken.
    /// - Then one line per operation, in the order they were added: two spaces, `▶` (executing),
    ///   `✓` (finishing: its completion block runs) or `⏸` (pending), the state padded to ten
    ///   characters (`executing`, `finishing`, `waiting`: a dependency has not finished, `ready`,
    ///   or `cancelled`: it finishes without running once the queue starts it), the operation's
    ///   ``Op/description``, and `(priority: P)`, with `, barrier` for a barrier and `, cancelled`
    ///   for a cancelled executing one.
    /// - A pending operation's line goes on with ` — ` and what holds it, clauses separated by
    ///   `; `, its own holds first:
    ///   - `for dependencies: D (state), …`: its unfinished dependencies; one outside this queue
    ///     says where it is (`in OpQueue "x"`, `child of GroupOp "g"`, or `in no queue`, which
    ///     nothing will ever start);
    ///   - `then conditions: c, …` (evaluated once the dependencies finished) or `evaluating
    ///     conditions: c, …`;
    ///   - `for exclusivity "category": held by H (state)`, or `asked for earlier by E (state)`
    ///     when an older request for the category goes first;
    ///   - `behind barrier B (state)`: the pending barrier added before it; and for a barrier,
    ///     `for N earlier operations to leave: …`;
    ///   - only if none of these holds it, the queue's: `queue is suspended` and `for a slot: R of
    ///     N running`; if nothing holds it at all, `about to start`.
    /// - An executing ``GroupOp``'s line ends with ` — for N unfinished children: …`.
    /// - Lists name five operations, then say `, and N more`. Line breaks in descriptions are
    ///   replaced by spaces.
    ///
    /// The queue and its operations are looked at together, under the queue's lock, so the counts
    /// and the lines agree; the operations they wait for are looked at a moment later. The
    /// descriptions (which a subclass may override) are read after every lock is released, so a
    /// `description` may use the queue. The dump shows a moment that has passed by the time it
    /// returns: use it to understand a stall, not to decide what to do next.
    ///
    /// ``OpDiagnostics`` reports of a dependency cycle among queued operations, and the traps of
    /// waits that could never return, end with the lines of the dump that show the operations
    /// involved.
    ///
    /// - Complexity: O(*n*) for *n* operations in the queue, plus their dependencies.
    public func dump() -> String {
        QueueDump.take(of: self).text
    }

    /// The queue's ``dump()``, cut after its first 100 operations: each operation, its state, and
    /// what holds it (`po queue` in a debugger).
    ///
    /// Like ``dump()``, it takes the queue's lock and those of its operations: in a debugger, with
    /// the program stopped while a thread holds one of them, it waits for that thread.
    public var debugDescription: String {
        QueueDump.take(of: self, limit: 100).text
    }
}
