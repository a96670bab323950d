/// A group that runs a fresh operation per attempt until one succeeds.
///
/// ```swift
/// let upload = RetryOp(
///     maxAttempts: 4,
///     backoff: .exponential(initial: .milliseconds(250), multiplier: 2, maximum: .seconds(4), jitter: true),
///     shouldRetry: { error, _ in error is TransientError }
/// ) { attempt in
///     let send = AsyncOp { try await client.upload(file) }
///     send.timeout = .seconds(10)
///     return send
/// }
/// queue.addOperation(upload)
/// ```
///
/// When it starts, it makes attempt 1 with `makeAttempt(1)` and runs it as its child. An attempt
/// that finishes with no ``Op/error`` (and is not cancelled) ends the retrying: it is the
/// ``succeededAttempt``. After a failed attempt, the next one is made and run unless the attempts
/// are used up, `shouldRetry(error, attempt)` says no, the ``Backoff`` says to stop, or the
/// `RetryOp` was cancelled. Between attempts it waits as the backoff says, with a ``DelayOp``
/// child on the `RetryOp`'s ``Op/clock`` (a test clock advanced by hand drives the backoff with
/// no real waiting): no thread is held, and cancelling the `RetryOp` ends the wait at once.
///
/// An attempt fails when it finishes with an ``Op/error`` (a timeout, see ``Op/timeout``, is one),
/// or when it is cancelled (with `CancellationError()` as its error if it has none).
///
/// **Outcome.** ``attemptCount`` counts the attempts made, and ``attempts`` lists the most recent
/// of them (up to ``attemptHistoryLimit``), in order: a `RetryOp` that retries for a long time
/// holds a bounded number of attempts. When none succeeded, the `RetryOp`'s ``Op/error`` is the
/// last attempt's error; errors of other children (added with ``GroupOp/addChild(_:)`` or
/// produced by an attempt) are not part of the outcome.
///
/// **Value.** When the attempts produce a value (each is a ``ProducesOutput`` operation, such as an
/// ``AsyncBlockOp`` or a ``ResultOp``), make a ``TypedRetryOp`` instead, with the same arguments:
/// it is a `RetryOp` that produces the attempts' value, so `try await retry.value` is typed, and
/// you can ``ProducesOutput/map(_:)->ResultOp<Transformed>`` it or ``Op/inject(from:_:)`` from it.
/// From a `RetryOp`, await the value with ``Op/value(as:)``, which throws an
/// ``OutputTypeMismatchError`` for a wrong type, or read it with ``output(as:)`` once finished.
///
/// Like any ``GroupOp``, it holds its queue slot while it runs, its ``Op/progress`` rolls up its
/// children (attempts and waits), and cancelling it cancels the running attempt.
///
/// - Important: `makeAttempt` must return a new operation, in no queue, a child of no group and
///   not started (it becomes a child of the `RetryOp`): returning another traps. `maxAttempts`
///   must be at least 1.
public class RetryOp: GroupOp, @unchecked Sendable {
    // @unchecked Sendable: `record` is a locked box; the other stored properties are immutable.
    // Not final, but not open either: its one subclass is ``TypedRetryOp``, which adds only
    // immutable state; the members below are final.

    private struct Record {
        /// The most recent attempts, oldest first: at most ``RetryOp/attemptHistoryLimit``, and the
        /// last is the latest attempt.
        var recentAttempts: [Op] = []
        /// How many attempts were made.
        var attemptCount = 0
        var succeeded: Op?
        var lastError: (any Error)?
        /// The wait before the next attempt, while it runs.
        var wait: DelayOp?
        /// The closures, released once the `RetryOp` has finished (they may capture its owner).
        var makeAttempt: (@Sendable (Int) -> Op)?
        var shouldRetry: (@Sendable (any Error, Int) -> Bool)?
    }

    /// How many of the most recent attempts a `RetryOp` keeps (see ``attempts``).
    public static let attemptHistoryLimit = 10

    /// The most attempts made.
    public let maxAttempts: Int
    /// How long to wait between attempts.
    public let backoff: Backoff
    private let record = LockedBox(Record())

    /// Creates an operation that makes and runs up to `maxAttempts` attempts.
    ///
    /// - Parameters:
    ///   - maxAttempts: The most attempts made (at least 1).
    ///   - backoff: How long to wait between attempts (``Backoff/none`` by default).
    ///   - shouldRetry: Asked after attempt `attempt` (numbered from 1) failed with `error`,
    ///     whether to make another; by default, always.
    ///   - makeAttempt: Makes the operation of attempt `attempt` (numbered from 1).
    public init(
        maxAttempts: Int,
        backoff: Backoff = .none,
        shouldRetry: @escaping @Sendable (_ error: any Error, _ attempt: Int) -> Bool = { _, _ in true },
        makeAttempt: @escaping @Sendable (_ attempt: Int) -> Op
    ) {
        guard maxAttempts >= 1 else {
            misuse("RetryOp was created with maxAttempts \(maxAttempts); it must make at least one attempt. Pass 1 or more.")
        }
        self.maxAttempts = maxAttempts
        self.backoff = backoff
        super.init()
        record.withLockedValue { record in
            record.makeAttempt = makeAttempt
            record.shouldRetry = shouldRetry
        }
    }

    /// Creates an operation that waits for `input`'s value and passes it to every attempt: the
    /// input of a retried step, injected once, reaches each try.
    ///
    /// ```swift
    /// let signIn = AsyncBlockOp { try await session.token() }
    /// let upload = RetryOp(maxAttempts: 3, input: signIn) { attempt, token in
    ///     AsyncOp { try await client.upload(file, token: token) }
    /// }
    /// queue.addOperations([signIn, upload], waitUntilFinished: false)
    /// ```
    ///
    /// `input` becomes a dependency (see ``Op/inject(from:_:)``): if it fails or is cancelled,
    /// the `RetryOp` is cancelled with an ``InjectionError`` and makes no attempt.
    ///
    /// - Parameters:
    ///   - maxAttempts: The most attempts made (at least 1).
    ///   - backoff: How long to wait between attempts (``Backoff/none`` by default).
    ///   - shouldRetry: Asked after attempt `attempt` failed with `error`, whether to make another.
    ///   - input: The operation whose value every attempt gets.
    ///   - makeAttempt: Makes the operation of attempt `attempt` (numbered from 1) from the input.
    public convenience init<Input: ProducesOutput>(
        maxAttempts: Int,
        backoff: Backoff = .none,
        shouldRetry: @escaping @Sendable (_ error: any Error, _ attempt: Int) -> Bool = { _, _ in true },
        input: Input,
        makeAttempt: @escaping @Sendable (_ attempt: Int, _ input: Input.Output) -> Op
    ) {
        let received = InputBox<Input.Output>()
        self.init(maxAttempts: maxAttempts, backoff: backoff, shouldRetry: shouldRetry) { attempt in
            makeAttempt(attempt, received.value(for: "RetryOp"))
        }
        inject(from: input) { _, value in received.store(value) }
    }

    /// The most recent attempts, in the order they were made: all of them while there are at most
    /// ``attemptHistoryLimit``, then the last ``attemptHistoryLimit`` (``attemptCount`` counts
    /// them all). The ``succeededAttempt`` is the last.
    public final var attempts: [Op] {
        record.withLockedValue { $0.recentAttempts }
    }

    /// How many attempts were made so far.
    public final var attemptCount: Int {
        record.withLockedValue { $0.attemptCount }
    }

    /// The attempt that finished with no error, once there is one.
    public final var succeededAttempt: Op? {
        record.withLockedValue { $0.succeeded }
    }

    /// The output of the attempt that succeeded, typed: `nil` until the `RetryOp` has finished;
    /// then the succeeded attempt's ``ProducesOutput/output``, or `.failure` with the
    /// `RetryOp`'s error (`CancellationError()` if it has none) when no attempt succeeded or the
    /// `RetryOp` was cancelled (cancellation wins, as for ``ProducesOutput/output``).
    ///
    /// ```swift
    /// let fetch = RetryOp(maxAttempts: 3) { _ in AsyncBlockOp { try await client.download(url) } }
    /// // ...
    /// let data = try fetch.output(as: Data.self)?.get()
    /// ```
    ///
    /// To wait for the value, and be told of a wrong type with an error, use ``Op/value(as:)``;
    /// for a typed value, make a ``TypedRetryOp``.
    ///
    /// - Important: Asking for a type that the succeeded attempt does not produce traps.
    public final func output<Output: Sendable>(as type: Output.Type = Output.self) -> Result<Output, any Error>? {
        guard isFinished else { return nil }
        if let failure = finishedFailure {
            return .failure(failure)
        }
        guard let succeeded = succeededAttempt else {
            preconditionFailure("Internal inconsistency: \(self) finished with no error and no succeeded attempt")
        }
        guard let producer = succeeded as? any ProducesOutput<Output> else {
            misuse("output(as: \(Output.self).self) was asked of \(self), whose succeeded attempt \(succeeded) does not produce \(Output.self). Ask for the type its attempts produce.")
        }
        return producer.output
    }

    /// The value of this finished `RetryOp` read as a `Value` for ``Op/value(as:)``: what its
    /// succeeded attempt produces or, when it failed, its failure; a mismatch if its latest attempt
    /// does not produce `Value`, whatever the outcome.
    final func lookUpAttemptValue<Value>(as type: Value.Type) -> OutputLookup<Value> {
        let (latest, succeeded) = record.withLockedValue { ($0.recentAttempts.last, $0.succeeded) }
        let failure = finishedFailure
        guard let attempt = failure == nil ? succeeded : latest else {
            guard let failure else {
                preconditionFailure("Internal inconsistency: \(self) finished with no error and no succeeded attempt")
            }
            return .failure(failure)   // no attempt was made: no type to check
        }
        switch attempt.lookUpValue(as: type) {
        case .mismatch(let produced):
            return .mismatch(produced: produced)
        case .value(let value):
            return failure.map { .failure($0) } ?? .value(value)
        case .failure(let attemptError):
            return .failure(failure ?? attemptError)
        }
    }

    // MARK: Attempts

    /// Makes the first attempt, then runs the children.
    public final override func execute() {
        if !isCancelled {
            startAttempt(1)
        }
        super.execute()
    }

    private func startAttempt(_ number: Int) {
        guard let makeAttempt = record.withLockedValue({ $0.makeAttempt }) else { return }
        let attempt = makeAttempt(number)
        // Checked here, before `addChild(_:)` would, to say what went wrong in the words of
        // attempts.
        let (membership, hasStarted) = attempt.withState { ($0.membership, $0.lifecycle != .pending) }
        let problem: String? = switch membership {
        case .queue: "which is in a queue already"
        case .child(let link), .childInQueue(let link):
            link === self.link ? "which was an earlier attempt (or is another child of it)"
                : "which is a child of \(link.group.map { "\($0)" } ?? "another group") already"
        case .free: hasStarted ? "which has started already" : nil
        }
        if let problem {
            misuse("makeAttempt of \(self) returned \(attempt) for attempt \(number), \(problem). An operation runs once, in one place: make a new operation for every attempt.")
        }
        record.withLockedValue { record in
            record.recentAttempts.append(attempt)
            if record.recentAttempts.count > RetryOp.attemptHistoryLimit {
                record.recentAttempts.removeFirst()
            }
            record.attemptCount += 1
        }
        addChild(attempt)
    }

    /// An attempt or a wait finished: decides what comes next, before the group counts the child
    /// as finished (so that a child added here keeps it running).
    final override func childDidFinish(_ child: Op) {
        enum Next {
            case nothing
            case decide(attempt: Int, error: any Error)
            case attempt(Int)
        }
        let next: Next = record.withLockedValue { record in
            if let wait = record.wait, wait === child {
                record.wait = nil
                return .attempt(record.attemptCount + 1)
            }
            guard let last = record.recentAttempts.last, last === child else { return .nothing }
            let error = child.error ?? (child.isCancelled ? CancellationError() : nil)
            guard let error else {
                record.succeeded = child
                return .nothing
            }
            record.lastError = error
            return .decide(attempt: record.attemptCount, error: error)
        }
        switch next {
        case .nothing:
            return
        case .attempt(let number):
            if !isCancelled {
                startAttempt(number)
            }
        case .decide(let number, let error):
            // User code (shouldRetry, a custom backoff) runs with no lock held.
            guard !isCancelled, number < maxAttempts,
                  let shouldRetry = record.withLockedValue({ $0.shouldRetry }), shouldRetry(error, number),
                  let delay = backoff.delay(afterAttempt: number) else { return }
            if delay <= .zero {
                startAttempt(number + 1)
            } else {
                let wait = DelayOp(for: delay)
                wait.name = "wait before attempt \(number + 1)"
                if let clock = timingClock {
                    wait.clock = clock   // the backoff is measured on this operation's clock
                }
                record.withLockedValue { $0.wait = wait }
                addChild(wait)
            }
        }
    }

    /// The last attempt's error when none succeeded (not a ``GroupError``). Called once every
    /// child has finished: no attempt is made any more, so the closures are released.
    final override func failure(fromChildErrors errors: [any Error], droppedErrorCount: Int) -> (any Error)? {
        let (failure, closures) = record.withLockedValue { record in
            let closures = (record.makeAttempt, record.shouldRetry)
            record.makeAttempt = nil
            record.shouldRetry = nil
            return (record.succeeded == nil ? record.lastError : nil, closures)
        }
        withExtendedLifetime(closures) {}   // released outside the lock
        return failure
    }
}
