import Dispatch
@testable import Operations

// The control features of a composition run (see `CompositionControlPlans.swift`): making
// producers, mapped operations, `RetryOp`s and their attempts, `DelayOp`s; injections; timeouts;
// waits for cancellation; and what they record for ``CompositionHarness/checkControl``.

extension CompositionRun {
    /// What a run records of an operation's control features.
    struct ControlRecord {
        /// When it was made (before its timeout could start counting).
        var createdAt: ContinuousClock.Instant?
        /// When its own observer heard willExecute / willFinish (delays).
        var startedAt: ContinuousClock.Instant?
        var endedAt: ContinuousClock.Instant?
        /// When its completion block ran (it reads as finished).
        var completedAt: ContinuousClock.Instant?
        /// Its own observer saw it start executing and has not seen willFinish yet.
        var ownExecuting = false
        /// The timeout of the `OpTimeoutError` naming the operation itself that is its error.
        var finalTimeout: Duration?
        /// Its error is an `OpTimeoutError` naming another operation.
        var finalForeignTimeout = false
        /// Its error is an `InjectionError`: the producer (nil if not of this run) and the
        /// producer's error it carries.
        var finalInjectionError: (producer: Int?, underlying: String)?
        /// Injected values, per producer.
        var injected: [Int: Int] = [:]
        /// An injection ran after the consumer, cancelled, had finished without running.
        var injectedAfterCancelledFinish = false
        /// A wait for cancellation (of the body or a 2 s delay) ran out without a cancellation.
        var waitExpired = false
        /// A producer's `output` after it finished: "value N" or "failure …".
        var output: String?
        var retry: RetryRecord?
    }

    /// A `RetryOp`'s attempts as they were made, and what it said once finished.
    struct RetryRecord {
        /// The attempt numbers `makeAttempt` was called with, in order, with logical and clock times.
        var made: [(number: Int, stamp: UInt64, at: ContinuousClock.Instant)] = []
        /// By attempt number.
        var attempts: [Int: AttemptRecord] = [:]
        var shouldRetryCalls: [(attempt: Int, error: String)] = []
        /// After it finished: the names of `attempts`, of `succeededAttempt`, and `output(as:)`.
        var finalAttempts: [String] = []
        var finalSucceeded: String?
        var finalOutput: String?
    }

    struct AttemptRecord {
        var bodyStartStamp: UInt64?
        var bodyEndStamp: UInt64?
        var bodyEndedAt: ContinuousClock.Instant?
        var completedStamp: UInt64?
        var finalError: String?
        var finalCancelled = false
    }

    /// "value N" or "failure …", as the harness compares outputs.
    static func describe(_ output: Result<Int, any Error>?) -> String? {
        switch output {
        case .success(let value)?: "value \(value)"
        case .failure(let error)?: "failure \(error)"
        case nil: nil
        }
    }

    /// The value of attempt `number` of the retry `id`.
    static func attemptValue(_ id: Int, _ number: Int) -> Int { id &* 7_919 &+ number }

    func attemptName(_ id: Int, _ number: Int) -> String { "\(name(of: id)).a\(number)" }

    /// The node id in an operation's description (`ResultOp<Int> "composition12.n34"`), if the
    /// operation belongs to this run.
    func nodeID(in description: String) -> Int? {
        guard let range = description.firstRange(of: "\"\(token).n") else { return nil }
        return Int(description[range.upperBound...].prefix { $0.isNumber })
    }

    // MARK: Making operations

    func makeProducer(_ id: Int, async: Bool) -> Op {
        if async {
            return AsyncBlockOp<Int> { [self] in try await asyncProducerBody(id) }
        }
        return ResultOp<Int> { [self] in try producerBody(id) }
    }

    /// `map` of its source; a missing source is reported, and replaced by a producer.
    func makeMapped(_ id: Int, async: Bool) -> Op {
        let sourceID = scenario.nodes[id].mapSource!
        switch boxes[sourceID].operation {
        case let source as ResultOp<Int>:
            return async ? source.map { [self] value in try await asyncMappedBody(id, value) }
                         : source.map { [self] value in try mappedBody(id, value) }
        case let source as AsyncBlockOp<Int>:
            return async ? source.map { [self] value in try await asyncMappedBody(id, value) }
                         : source.map { [self] value in try mappedBody(id, value) }
        default:
            violation("n\(id): its map source n\(sourceID) is released or not a producer")
            return makeProducer(id, async: async)
        }
    }

    func makeRetry(_ id: Int) -> Op {
        let plan = scenario.nodes[id].retryPlan!
        state.withLockedValue { $0.records[id].control.retry = RetryRecord() }
        return RetryOp(
            maxAttempts: plan.maxAttempts, backoff: plan.backoffValue,
            shouldRetry: { [self] error, attempt in
                state.withLockedValue { $0.records[id].control.retry!.shouldRetryCalls.append((attempt, "\(error)")) }
                return plan.stopAfter.map { attempt < $0 } ?? true
            },
            makeAttempt: { [self] number in makeAttempt(id, number) })
    }

    func makeDelay(_ id: Int) -> Op {
        DelayOp(for: scenario.nodes[id].delay)
    }

    /// Attempt `number` of the retry `id`: a producer of `attemptValue(id, number)` that fails
    /// as planned.
    private func makeAttempt(_ id: Int, _ number: Int) -> Op {
        let plan = scenario.nodes[id].retryPlan!
        let kind = plan.kinds.indices.contains(number - 1) ? plan.kinds[number - 1] : .sync
        let attempt: Op
        switch kind {
        case .sync:
            attempt = ResultOp<Int> { [self] in try syncAttempt(id, number) }
        case .async:
            attempt = AsyncBlockOp<Int> { [self] in try await asyncAttempt(id, number, waits: false) }
        case .timesOut(let microseconds):
            attempt = AsyncBlockOp<Int> { [self] in try await asyncAttempt(id, number, waits: true) }
            attempt.timeout = .microseconds(microseconds)
        }
        attempt.name = attemptName(id, number)
        let box = WeakOpBox()
        box.set(attempt)
        attempt.completionBlock = { [self] in attemptCompleted(id, number, box) }
        let retry = boxes[id].operation
        let finished = retry?.isFinished ?? true
        state.withLockedValue { state in
            let stamp = state.stamp()
            state.attemptBoxes.append((attemptName(id, number), box))
            state.records[id].control.retry!.made.append((number, stamp, .now))
            if state.records[id].control.retry!.attempts[number] != nil {
                state.violations.append("n\(id): RetryOp made attempt \(number) twice")
            }
            state.records[id].control.retry!.attempts[number] = AttemptRecord()
            if number == 1 {
                state.records[id].bodyStarts += 1
                state.records[id].bodyStartStamp = stamp
            }
            if finished {
                state.violations.append("n\(id): RetryOp made attempt \(number) after it finished (or was released)")
            }
        }
        return attempt
    }

    private func attemptBegin(_ id: Int, _ number: Int) {
        let current = Op.current
        if current?.name != attemptName(id, number) {
            violation("n\(id): Op.current in attempt \(number) is \(current.map(\.description) ?? "nil")")
        }
        let retry = boxes[id].operation
        if current?.group !== retry || retry == nil {
            violation("n\(id): attempt \(number) runs, but its group is \(current?.group.map(\.description) ?? "nil"), not its RetryOp")
        } else if let retry, !retry.isExecuting {
            violation("n\(id): attempt \(number) runs while its RetryOp is not executing (finished: \(retry.isFinished))")
        }
        state.withLockedValue { state in
            let stamp = state.stamp()
            state.records[id].control.retry!.attempts[number, default: AttemptRecord()].bodyStartStamp = stamp
        }
    }

    /// The end of an attempt's body: it cancels its RetryOp if planned, then fails as planned.
    private func attemptEnd(_ id: Int, _ number: Int) throws -> Int {
        let plan = scenario.nodes[id].retryPlan!
        if plan.cancelsRetryDuring == number {
            Op.current?.group?.cancel()
        }
        state.withLockedValue { state in
            let stamp = state.stamp()
            state.records[id].control.retry!.attempts[number, default: AttemptRecord()].bodyEndStamp = stamp
            state.records[id].control.retry!.attempts[number, default: AttemptRecord()].bodyEndedAt = .now
        }
        guard plan.fails(number) else { return Self.attemptValue(id, number) }
        let error = CompositionError(node: id, reason: "attempt \(number)")
        if plan.cancelsItself.indices.contains(number - 1), plan.cancelsItself[number - 1], let current = Op.current {
            current.cancel(with: error)
            return Self.attemptValue(id, number)
        }
        throw error
    }

    private func syncAttempt(_ id: Int, _ number: Int) throws -> Int {
        attemptBegin(id, number)
        StressRun.pause(.spin(microseconds: (id + number) % 4 * 40))
        return try attemptEnd(id, number)
    }

    private func asyncAttempt(_ id: Int, _ number: Int, waits: Bool) async throws -> Int {
        attemptBegin(id, number)
        if waits {
            // Fails by its timeout: waits until it is cancelled.
            try? await Task.sleep(for: .seconds(2))
            if !Task.isCancelled {
                violation("n\(id): attempt \(number) waited 2 s for its timeout of \(scenario.nodes[id].retryPlan!.kinds[number - 1]), which never cancelled it")
            }
        } else if (id + number) % 3 == 0 {
            try? await Task.sleep(for: .microseconds(100))
        } else {
            await Task.yield()
        }
        return try attemptEnd(id, number)
    }

    private func attemptCompleted(_ id: Int, _ number: Int, _ box: WeakOpBox) {
        let attempt = box.operation
        let finished = attempt?.isFinished ?? false
        let error = attempt?.error
        let cancelled = attempt?.isCancelled ?? false
        state.withLockedValue { state in
            let stamp = state.stamp()
            var record = state.records[id].control.retry!.attempts[number, default: AttemptRecord()]
            if record.completedStamp != nil {
                state.violations.append("n\(id): the completion block of attempt \(number) ran twice")
            }
            if !finished {
                state.violations.append("n\(id): the completion block of attempt \(number) runs before it reads as finished")
            }
            record.completedStamp = stamp
            record.finalError = error.map { "\($0)" }
            record.finalCancelled = cancelled
            state.records[id].control.retry!.attempts[number] = record
        }
    }

    // MARK: Injections

    /// Adds the node's injections to `operation` (typed as its own class where the harness knows
    /// it), and returns their condition models, in order.
    func addInjections(_ id: Int, to operation: Op) -> [ConditionModel] {
        scenario.nodes[id].injections.compactMap { injection in
            guard let producer = boxes[injection.producer].operation else {
                violation("n\(id): its producer n\(injection.producer) was released before it was created")
                return nil
            }
            switch operation {
            case let consumer as CompositionSyncOp: inject(consumer, id, injection, producer)
            case let consumer as CompositionAsyncOp: inject(consumer, id, injection, producer)
            case let consumer as CompositionBlockOp: inject(consumer, id, injection, producer)
            case let consumer as ResultOp<Int>: inject(consumer, id, injection, producer)
            case let consumer as AsyncBlockOp<Int>: inject(consumer, id, injection, producer)
            default: inject(operation, id, injection, producer)
            }
            return .leaf("injection n\(injection.producer)", .injection(producer: injection.producer, throwing: injection.throwing))
        }
    }

    private func inject<Consumer: Op>(_ consumer: Consumer, _ id: Int, _ injection: CompositionScenario.Injection, _ producer: Op) {
        let body: @Sendable (Consumer, Int) throws -> Void = { [self] consumer, value in
            try injected(value, from: injection, into: id, consumer: consumer)
        }
        switch producer {
        case let producer as ResultOp<Int>: consumer.inject(from: producer, body)
        case let producer as AsyncBlockOp<Int>: consumer.inject(from: producer, body)
        default: violation("n\(id): its producer n\(injection.producer) is \(producer), not a producer of Int")
        }
    }

    /// An injection's closure runs: the producer has finished with the value it should have, the
    /// consumer has not started; throws if planned.
    private func injected(_ value: Int, from injection: CompositionScenario.Injection, into id: Int, consumer: Op) throws {
        let producerID = injection.producer
        if consumer.name != name(of: id) {
            violation("n\(id): its injection from n\(producerID) was given \(consumer)")
        }
        // A cancelled consumer finishes without running; its conditions and injections may still
        // be evaluated meanwhile (as with any condition), so only an uncancelled one must not be
        // finished yet.
        let finishedCancelled = consumer.isFinished && consumer.isCancelled
        if consumer.isExecuting || (consumer.isFinished && !finishedCancelled) {
            violation("n\(id): its injection from n\(producerID) runs while it is \(consumer.isFinished ? "finished" : "executing")")
        }
        if let producer = boxes[producerID].operation, !producer.isFinished {
            violation("n\(id): its injection from n\(producerID) runs before the producer finished")
        }
        let expected = scenario.expectedValue(of: producerID)
        if value != expected {
            violation("n\(id): injected \(value) from n\(producerID), which produces \(expected)")
        }
        state.withLockedValue { state in
            if state.records[id].control.injected[producerID] != nil {
                state.violations.append("n\(id): its injection from n\(producerID) ran twice")
            }
            state.records[id].control.injected[producerID] = value
            if finishedCancelled { state.records[id].control.injectedAfterCancelledFinish = true }
        }
        if injection.throwing {
            throw CompositionError(node: id, reason: "injection n\(producerID)")
        }
    }

    /// At the start of a body: every injection was made (a body runs only if all succeeded).
    func checkInjections(_ id: Int, _ state: inout State) {
        for injection in scenario.nodes[id].injections {
            if state.records[id].control.injected[injection.producer] == nil {
                state.violations.append("n\(id): its body runs, but the value of n\(injection.producer) was never injected")
            } else if injection.throwing {
                state.violations.append("n\(id): its body runs although its injection from n\(injection.producer) threw")
            }
        }
    }

    // MARK: Bodies

    private func currentOperation(of id: Int) -> Op? {
        guard let operation = Op.current, operation.name == name(of: id) else {
            violation("n\(id): Op.current in its body is \(Op.current.map(\.description) ?? "nil")")
            return nil
        }
        return operation
    }

    /// The value it produces (from what was injected), or its planned failure.
    private func producerResult(_ id: Int, _ operation: Op) throws -> Int {
        let injected = state.withLockedValue { $0.records[id].control.injected }
        let value = scenario.nodes[id].injections.reduce(id &* 1_000_003) { $0 &* 31 &+ (injected[$1.producer] ?? 0) }
        return try failAsPlanned(id, operation, value: value)
    }

    private func failAsPlanned(_ id: Int, _ operation: Op, value: Int) throws -> Int {
        switch scenario.nodes[id].failure {
        case .none: return value
        case .cancelWithError:
            operation.cancel(with: CompositionError(node: id, reason: "body"))
            return value
        case .throwing: throw CompositionError(node: id, reason: "body")
        }
    }

    private func producerBody(_ id: Int) throws -> Int {
        guard let operation = currentOperation(of: id) else { return 0 }
        bodyBegin(id, operation)
        if scenario.nodes[id].waitsForCancellation { waitForCancellation(id, operation) }
        work(id, operation)
        bodyEnd(id)
        return try producerResult(id, operation)
    }

    private func asyncProducerBody(_ id: Int) async throws -> Int {
        guard let operation = currentOperation(of: id) else { return 0 }
        bodyBegin(id, operation)
        if scenario.nodes[id].waitsForCancellation { await waitForCancellation(id) } else { await Task.yield() }
        work(id, operation)
        bodyEnd(id)
        return try producerResult(id, operation)
    }

    private func mappedBody(_ id: Int, _ value: Int) throws -> Int {
        guard let operation = currentOperation(of: id) else { return 0 }
        bodyBegin(id, operation)
        if scenario.nodes[id].waitsForCancellation { waitForCancellation(id, operation) }
        work(id, operation)
        bodyEnd(id)
        return try failAsPlanned(id, operation, value: value &+ 1)
    }

    private func asyncMappedBody(_ id: Int, _ value: Int) async throws -> Int {
        guard let operation = currentOperation(of: id) else { return 0 }
        bodyBegin(id, operation)
        if scenario.nodes[id].waitsForCancellation { await waitForCancellation(id) } else { await Task.yield() }
        work(id, operation)
        bodyEnd(id)
        return try failAsPlanned(id, operation, value: value &+ 2)
    }

    /// A synchronous body waits (up to 2 s) until its operation is cancelled: its short timeout
    /// must do it.
    func waitForCancellation(_ id: Int, _ operation: Op) {
        let deadline = ContinuousClock.now + .seconds(2)
        let sleeper = DispatchSemaphore(value: 0)
        while !operation.isCancelled && ContinuousClock.now < deadline {
            _ = sleeper.wait(timeout: .now() + .microseconds(100))
        }
        if !operation.isCancelled {
            state.withLockedValue { $0.records[id].control.waitExpired = true }
        }
    }

    /// An `async` body waits (up to 2 s) until its task is cancelled: its short timeout must do it.
    func waitForCancellation(_ id: Int) async {
        try? await Task.sleep(for: .seconds(2))
        if !Task.isCancelled {
            state.withLockedValue { $0.records[id].control.waitExpired = true }
        }
    }

    // MARK: The harness's own observer

    /// The own observer of a retry, delay or mapped operation hears willExecute: it starts executing
    /// (a delay or a retry holds its categories and its slot until willFinish).
    func ownWillExecute(_ id: Int, _ operation: Op) {
        let node = scenario.nodes[id]
        let cancelled = operation.isCancelled
        let unfinished = operation.dependencies.filter { !$0.isFinished }
        if !unfinished.isEmpty && !cancelled {
            violation("n\(id): started before its dependencies \(unfinished.map(\.description)) finished")
        }
        // Not checked once cancelled: a cancelled retry gives its categories back, and a delay
        // cancelled as it starts may finish (and give them back) before this callback (K7).
        let holds = (node.isDelay || node.isRetry) && !cancelled
        if holds {
            let notHeld = node.categories.filter { category in
                !Exclusivity.holders(of: categoryNames[category]).contains { $0 === operation }
            }
            if !notHeld.isEmpty {
                violation("n\(id): runs without holding its categories \(notHeld.map { categoryNames[$0] })")
            }
        }
        if (node.isDelay || node.isRetry) && !cancelled {
            checkAncestorsExecuting(id)
        }
        state.withLockedValue { state in
            let stamp = state.stamp()
            // K7: a delay cancelled as it starts may have finished already: it holds nothing.
            let finishedAlready = state.records[id].control.endedAt != nil
            state.records[id].executions += 1
            if state.records[id].executions > 1 {
                state.violations.append("n\(id): it started executing \(state.records[id].executions) times")
            }
            state.records[id].executedCancelled = cancelled
            state.records[id].control.startedAt = .now
            if node.isDelay {
                state.records[id].bodyStarts += 1
                state.records[id].bodyStartStamp = stamp
            }
            if (node.isDelay || node.isRetry) && !finishedAlready {
                let held = holds ? node.categories : []
                state.records[id].heldCategories = held
                state.records[id].control.ownExecuting = true
                enter(id, held, &state)
                enterSlot(id, &state)
            }
        }
        if let timed = node.cancelAfterStart {
            let box = boxes[id]
            DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(timed.microseconds)) {
                guard let operation = box.operation else { return }
                if timed.withError {
                    operation.cancel(with: CompositionError(node: id, reason: "timer"))
                } else {
                    operation.cancel()
                }
            }
        }
    }

    /// The own observer hears willFinish: the work is over.
    func ownWillFinish(_ id: Int) {
        state.withLockedValue { state in
            let stamp = state.stamp()
            state.records[id].groupEndStamp = stamp
            state.records[id].control.endedAt = .now
            guard state.records[id].control.ownExecuting else { return }
            state.records[id].control.ownExecuting = false
            if scenario.nodes[id].isDelay {
                state.records[id].bodyEndStamp = stamp
            }
            exit(id, state.records[id].heldCategories, &state)
            exitSlot(id, &state)
        }
    }

    // MARK: Completion

    /// The name of the condition whose failure `error` is, if it is one: a `ConditionFailedError`'s,
    /// or the injection that failed or threw.
    func conditionFailureName(of error: (any Error)?, _ id: Int) -> String? {
        if let failure = error as? ConditionFailedError { return failure.condition }
        if let failure = error as? InjectionError {
            return "injection \(nodeID(in: failure.producer).map { "n\($0)" } ?? failure.producer)"
        }
        if let failure = error as? CompositionError, failure.node == id, failure.reason.hasPrefix("injection ") {
            return failure.reason
        }
        return nil
    }

    /// Records, when the completion block runs, what the control checks need of the finished
    /// operation.
    func controlCompleted(_ id: Int, _ operation: Op?, error: (any Error)?) {
        let now = ContinuousClock.now
        var finalTimeout: Duration?
        var foreignTimeout = false
        if let timedOut = error as? OpTimeoutError, let operation {
            if timedOut.operation == operation.description {
                finalTimeout = timedOut.timeout
            } else {
                foreignTimeout = true
            }
        }
        let injectionError = (error as? InjectionError).map { (producer: nodeID(in: $0.producer), underlying: "\($0.underlyingError)") }
        let output: String? = switch operation {
        case let producer as ResultOp<Int>: Self.describe(producer.output)
        case let producer as AsyncBlockOp<Int>: Self.describe(producer.output)
        default: nil
        }
        var retryFinal: (attempts: [String], succeeded: String?, output: String?)?
        if let retry = operation as? RetryOp {
            let attempts = retry.attempts.map { $0.name ?? "?" }
            let succeeded = retry.succeededAttempt
            // `output(as:)` traps if the succeeded attempt produces another type: all produce Int.
            retryFinal = (attempts, succeeded.map { $0.name ?? "?" }, Self.describe(retry.output(as: Int.self)))
        }
        state.withLockedValue { state in
            state.records[id].control.completedAt = now
            state.records[id].control.finalTimeout = finalTimeout
            state.records[id].control.finalForeignTimeout = foreignTimeout
            state.records[id].control.finalInjectionError = injectionError
            state.records[id].control.output = output
            if let retryFinal {
                state.records[id].control.retry!.finalAttempts = retryFinal.attempts
                state.records[id].control.retry!.finalSucceeded = retryFinal.succeeded
                state.records[id].control.retry!.finalOutput = retryFinal.output
            }
        }
    }
}
