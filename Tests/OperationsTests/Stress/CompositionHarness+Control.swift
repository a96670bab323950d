@testable import Operations

// The checks of the control features (see `CompositionControlPlans.swift`), made after the run
// from what ``CompositionRun`` recorded. Only race-free facts are asserted: what the final state
// of the operations implies, and timings that must hold whatever the scheduling (lower bounds,
// and "finished before its timeout could pass").

extension CompositionHarness {
    static func checkControl(
        _ id: Int, run: CompositionRun, records: [CompositionRun.Record], ran: Bool, failing: String?,
        violations: inout [String], statistics: inout [String: Int]
    ) {
        let scenario = run.scenario
        let node = scenario.nodes[id]
        let record = records[id]
        let control = record.control
        let what = describe(id, run)
        func count(_ key: String, _ amount: Int = 1) { if amount > 0 { statistics[key, default: 0] += amount } }
        func count(_ key: String, _ add: Bool) { count(key, add ? 1 : 0) }
        let cancellation = "\(CancellationError())"

        // Timeouts: only an operation with a timeout times out, it is then cancelled, and not if it
        // finished before its timeout could pass (counted from its creation, before it started).
        count("timeouts", node.timeout != nil)
        if let timeout = control.finalTimeout {
            count("timeouts passed")
            if !record.finalCancelled {
                violations.append("\(what): its error is its OpTimeoutError, yet it is not cancelled")
            }
            if let planned = node.timeout {
                if timeout != planned {
                    violations.append("\(what): its OpTimeoutError says \(timeout), its timeout is \(planned)")
                }
            } else {
                violations.append("\(what): it has no timeout, yet its error is \(record.finalError ?? "")")
            }
        }
        if control.finalForeignTimeout && !node.isRetry && !isMapped(node) {
            violations.append("\(what): its error is the OpTimeoutError of another operation: \(record.finalError ?? "")")
        }
        if let timeout = node.timeout, let created = control.createdAt, let completed = control.completedAt,
           completed - created < timeout - .milliseconds(1) {
            count("timeouts checked as not passed")
            if control.finalTimeout != nil {
                violations.append("\(what): timed out (timeout \(timeout)) although it finished \(completed - created) after it was created")
            }
        }
        if control.waitExpired {
            violations.append("\(what): its body waited 2 s for a cancellation, but its timeout of \(node.timeout.map { "\($0)" } ?? "nil") never came")
        }
        count("waits for cancellation ended by the timeout", node.waitsForCancellation && control.finalTimeout != nil)

        // Delays: one that is not cancelled waits its whole duration and has no error.
        if node.isDelay {
            count("delays")
            count("delays cancelled", record.finalCancelled)
            if !record.finalCancelled {
                if let error = record.finalError {
                    violations.append("\(what): a delay that is not cancelled finished with error \(error)")
                }
                if let started = control.startedAt, let ended = control.endedAt, ended - started < node.delay {
                    violations.append("\(what): the delay of \(node.delay) finished \(ended - started) after it started")
                }
                if node.delayMicroseconds >= 2_000_000 {
                    violations.append("\(what): its 2 s delay was not ended by its timeout of \(node.timeout.map { "\($0)" } ?? "nil")")
                }
            }
        }

        // Injections: a consumer of a failed or cancelled producer is cancelled and its body does
        // not run; an InjectionError names such a producer and carries its error.
        count("injections", node.injections.count)
        count("injections delivered", control.injected.count)
        count("injections run after the cancelled consumer finished", control.injectedAfterCancelledFinish)
        let failedProducers = node.injections.map(\.producer).filter { records[$0].finalError != nil || records[$0].finalCancelled }
        if !failedProducers.isEmpty {
            count("consumers of a failed producer")
            if ran {
                violations.append("\(what): its body ran although its producers \(failedProducers.map { "n\($0)" }) failed or were cancelled")
            }
            if !record.finalCancelled {
                violations.append("\(what): not cancelled although its producers \(failedProducers.map { "n\($0)" }) failed or were cancelled")
            }
        }
        if let injectionError = control.finalInjectionError,
           !passesThroughSourceError(id, scenario: scenario, records: records, failing: failing) {
            count("InjectionErrors")
            if let producer = injectionError.producer, node.injections.contains(where: { $0.producer == producer }) {
                let expected = records[producer].finalError ?? cancellation
                if !failedProducers.contains(producer) {
                    violations.append("\(what): its InjectionError names n\(producer), which succeeded")
                } else if injectionError.underlying != expected {
                    violations.append("\(what): its InjectionError from n\(producer) carries \(injectionError.underlying), the producer failed with \(expected)")
                }
            } else {
                violations.append("\(what): its error \(record.finalError ?? "") names none of its producers \(node.injections.map { "n\($0.producer)" })")
            }
        }

        // Producers: the output is the planned value, or the failure.
        if node.isProducer {
            count("producers")
            let expected = record.finalCancelled ? "failure \(record.finalError ?? cancellation)"
                : record.finalError.map { "failure \($0)" } ?? "value \(scenario.expectedValue(of: id))"
            if control.output != expected {
                violations.append("\(what): its output is \(control.output ?? "nil"), expected \(expected)")
            }
            count("producers succeeded", control.output?.hasPrefix("value") ?? false)
        }
        // map: the transform runs only on a value; a failure of the source passes through.
        if let source = node.mapSource {
            count("maps")
            let sourceFailed = records[source].finalError != nil || records[source].finalCancelled
            count("maps of a failed source", sourceFailed)
            if sourceFailed && record.bodyStarts > 0 {
                violations.append("\(what): its transform ran although its source n\(source) failed or was cancelled")
            }
            let expected = records[source].finalError ?? cancellation
            if sourceFailed && !record.finalCancelled && record.finalError != expected {
                violations.append("\(what): its source n\(source) failed with \(expected), yet its error is \(record.finalError ?? "nil")")
            }
        }

        // Dependents of a retry or a delay start only once it has finished: after its willFinish,
        // which it hears before it reads as finished if it executed (one that never executed may
        // hear it later).
        for dependency in scenario.allDependencies(of: id) where scenario.nodes[dependency].isRetry || scenario.nodes[dependency].isDelay {
            guard let start = record.bodyStartStamp, !(node.isGroup && record.executedCancelled),
                  records[dependency].executions > 0 else { continue }
            if let end = records[dependency].groupEndStamp, start < end {
                violations.append("\(what): started before its dependency \(describe(dependency, run)) finished")
            }
        }

        if node.isRetry {
            checkRetry(id, run: run, records: records, violations: &violations, count: count)
        }
    }

    private static func isMapped(_ node: CompositionScenario.Node) -> Bool {
        node.mapSource != nil
    }

    /// Whether the error of a mapped operation is the failure of its source, passed through (and
    /// not the failure of its own conditions, which cancels it).
    static func passesThroughSourceError(_ id: Int, scenario: CompositionScenario, records: [CompositionRun.Record], failing: String?) -> Bool {
        guard let source = scenario.nodes[id].mapSource else { return false }
        let record = records[id]
        let sourceFailed = records[source].finalError != nil || records[source].finalCancelled
        let sourceError = records[source].finalError ?? "\(CancellationError())"
        return sourceFailed && record.finalError == sourceError && (!record.finalCancelled || failing == nil)
    }

    /// A `RetryOp`: its attempts are numbered 1...n in order, made and run while it executes and
    /// finished before it finishes; it succeeds with its last attempt, or fails with the last
    /// attempt's error; it waits as its backoff says; uncancelled, it makes the planned attempts.
    private static func checkRetry(
        _ id: Int, run: CompositionRun, records: [CompositionRun.Record], violations: inout [String],
        count: (String, Int) -> Void
    ) {
        let node = run.scenario.nodes[id]
        let record = records[id]
        guard let plan = node.retryPlan, let retry = record.control.retry else { return }
        let what = describe(id, run)
        let cancellation = "\(CancellationError())"
        let numbers = retry.made.map(\.number)
        count("retries", 1)
        count("retry attempts", numbers.count)
        count("retries cancelled", record.finalCancelled ? 1 : 0)
        count("retries succeeded", retry.finalSucceeded != nil ? 1 : 0)

        if record.executions != 1 {
            violations.append("\(what): the RetryOp executed \(record.executions) times")
        }
        if numbers != Array(1..<(numbers.count + 1)) {
            violations.append("\(what): made attempts \(numbers), not 1...\(numbers.count) in order")
        }
        if numbers.count > plan.maxAttempts {
            violations.append("\(what): made \(numbers.count) attempts, at most \(plan.maxAttempts) allowed")
        }
        let names = numbers.map { run.attemptName(id, $0) }
        if retry.finalAttempts != names {
            violations.append("\(what): its attempts are \(retry.finalAttempts), it made \(names)")
        }
        let end = record.groupEndStamp
        for made in retry.made {
            guard let attempt = retry.attempts[made.number] else { continue }
            guard let completed = attempt.completedStamp else {
                violations.append("\(what): the completion block of attempt \(made.number) never ran")
                continue
            }
            if let end, completed > end {
                violations.append("\(what): attempt \(made.number) completed after the RetryOp finished")
            }
            if let end, let start = attempt.bodyStartStamp, start > end {
                violations.append("\(what): attempt \(made.number) started after the RetryOp finished")
            }
            if let end, made.stamp > end {
                violations.append("\(what): attempt \(made.number) was made after the RetryOp finished")
            }
        }

        // Outcome: the last attempt decides.
        let last = retry.made.last.flatMap { retry.attempts[$0.number] }
        let lastFailed = last.map { $0.finalError != nil || $0.finalCancelled }
        if let succeeded = retry.finalSucceeded {
            if succeeded != names.last {
                violations.append("\(what): succeededAttempt is \(succeeded), not its last attempt \(names.last ?? "none")")
            }
            if lastFailed == true {
                violations.append("\(what): succeededAttempt \(succeeded) failed: \(last?.finalError ?? "cancelled")")
            }
            // Cancellation wins: a RetryOp cancelled after its attempt succeeded has no value.
            let expected = record.finalCancelled
                ? "failure \(record.finalError ?? cancellation)"
                : "value \(CompositionRun.attemptValue(id, numbers.last ?? 0))"
            if retry.finalOutput != expected {
                violations.append("\(what): output(as:) is \(retry.finalOutput ?? "nil"), expected \(expected) (cancelled: \(record.finalCancelled))")
            }
        } else {
            if lastFailed == false {
                violations.append("\(what): its last attempt succeeded, yet succeededAttempt is nil")
            }
            let expected = "failure \(record.finalError ?? cancellation)"
            if retry.finalOutput != expected {
                violations.append("\(what): output(as:) is \(retry.finalOutput ?? "nil") with no attempt succeeded, expected \(expected)")
            }
        }
        // Its own cancellation error (driver, timer, timeout) comes first; otherwise the error is
        // nil after a success, or the last attempt's.
        let ownError = record.control.finalTimeout != nil
            || record.finalError == "\(CompositionError(node: id, reason: "driver"))"
            || record.finalError == "\(CompositionError(node: id, reason: "timer"))"
        if !ownError {
            if retry.finalSucceeded != nil, let error = record.finalError {
                violations.append("\(what): an attempt succeeded, yet its error is \(error)")
            } else if retry.finalSucceeded == nil, let last {
                let expected = last.finalError ?? cancellation
                if record.finalError != expected {
                    violations.append("\(what): no attempt succeeded, its error is \(record.finalError ?? "nil"), the last attempt's is \(expected)")
                }
            }
        }
        // shouldRetry is asked about failed attempts, in order, with their errors.
        var previous = 0
        for call in retry.shouldRetryCalls {
            let expected = retry.attempts[call.attempt].map { $0.finalError ?? cancellation }
            if call.attempt <= previous || call.attempt >= plan.maxAttempts || call.error != expected {
                violations.append("\(what): shouldRetry was asked about attempt \(call.attempt) with \(call.error) (attempt's error \(expected ?? "none"), after attempt \(previous), maxAttempts \(plan.maxAttempts))")
            }
            previous = call.attempt
        }
        // The backoff: each attempt is made no earlier than the wait after the previous one's end.
        for (index, made) in retry.made.enumerated().dropFirst() {
            let previousNumber = retry.made[index - 1].number
            guard let ended = retry.attempts[previousNumber]?.bodyEndedAt else {
                violations.append("\(what): attempt \(made.number) was made, but the body of attempt \(previousNumber) never ended")
                continue
            }
            let minimum = plan.minimumWait(afterAttempt: previousNumber)
            if made.at - ended < minimum - .microseconds(1) {
                violations.append("\(what): attempt \(made.number) was made \(made.at - ended) after attempt \(previousNumber) ended; its backoff \(plan.backoff) waits at least \(minimum)")
            }
        }
        // Nothing cancelled it: the planned attempts, and the planned outcome.
        if !record.finalCancelled {
            if numbers.count != plan.expectedAttempts {
                violations.append("\(what): not cancelled, made \(numbers.count) attempts, expected \(plan.expectedAttempts) (failures \(plan.failures), maxAttempts \(plan.maxAttempts), stop after \(plan.stopAfter.map(String.init) ?? "-"))")
            }
            if (retry.finalSucceeded != nil) != plan.succeeds {
                violations.append("\(what): not cancelled, \(retry.finalSucceeded != nil ? "succeeded" : "failed"), expected to \(plan.succeeds ? "succeed" : "fail") (failures \(plan.failures), limit \(plan.limit))")
            }
        }
    }
}
