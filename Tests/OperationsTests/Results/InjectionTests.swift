import Testing
@testable import Operations

/// An error to fail producers and injections with, told apart by `id`.
private struct InjectionTestFailure: Error, Equatable {
    let id: Int
}

/// A synchronous consumer: keeps the values injected into it, in order, and logs what its body
/// saw.
private final class CollectingOp: Op, @unchecked Sendable {
    // @unchecked Sendable: `inputs` is a locked box; `log` is thread-safe and immutable.
    let inputs = LockedBox<[Int]>([])
    let log: EventLog<String>

    init(log: EventLog<String>) {
        self.log = log
        super.init()
    }

    /// Called by the injections.
    func receive(_ value: Int) {
        inputs.withLockedValue { $0.append(value) }
    }

    var received: [Int] { inputs.withLockedValue { $0 } }

    override func main() {
        log.append("body \(received)")
    }
}

/// An asynchronous consumer: its `async` body reads the text injected into it.
private final class AsyncConsumerOp: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: `input` is a locked box; `log` is thread-safe and immutable.
    let input = LockedBox<String?>(nil)
    let log: EventLog<String>

    init(log: EventLog<String>) {
        self.log = log
        super.init()
    }

    override func execute() async throws {
        await Task.yield()
        log.append("execute \(input.withLockedValue { $0 } ?? "nil")")
    }
}

/// The injection failure of `op`, if its error is one.
private func injectionError(of op: Op) -> InjectionError? {
    op.error as? InjectionError
}

@Suite struct InjectionTests {
    // MARK: Passing the value

    @Test func valueIsInjectedBeforeTheConsumersBodyRuns() async {
        let log = EventLog<String>()
        let producer = ResultOp {
            log.append("producer")
            return 21
        }
        let consumer = CollectingOp(log: log)
        consumer.inject(from: producer) { consumer, value in
            log.append("inject \(value)")
            consumer.receive(value)
        }
        await OpQueue().addOperations([consumer, producer], waitUntilFinished: true)
        #expect(log.all == ["producer", "inject 21", "body [21]"])
        #expect(consumer.error == nil)
        #expect(!consumer.isCancelled)
    }

    @Test func closureReceivesTheConsumerAsItsOwnSubclass() async {
        let log = EventLog<String>()
        let producer = ResultOp { 5 }
        let consumer = CollectingOp(log: log)
        let consumerID = ObjectIdentifier(consumer)
        let receivedSelf = LockedBox(false)
        // The annotation only compiles if the closure's first parameter is typed `CollectingOp`.
        consumer.inject(from: producer) { (typed: CollectingOp, value: Int) in
            receivedSelf.withLockedValue { $0 = ObjectIdentifier(typed) == consumerID }
            typed.receive(value)
        }
        await OpQueue().addOperations([producer, consumer], waitUntilFinished: true)
        #expect(receivedSelf.withLockedValue { $0 })
        #expect(consumer.received == [5])
    }

    @Test func producerBecomesADependency() {
        let producer = ResultOp { 1 }
        let consumer = BlockOp {}
        consumer.inject(from: producer) { _, _ in }
        #expect(consumer.dependencies.contains { $0 === producer })
        #expect(!consumer.isReady)
        producer.start()
        #expect(consumer.isReady)
    }

    @Test func valuesOfDifferentProducerKindsAreInjected() async {
        let log = EventLog<String>()
        let result = ResultOp { 1 }
        let asyncBlock = AsyncBlockOp<Int> {
            await Task.yield()
            return 2
        }
        let invocation = InvocationOp<Int>(invocation: { 3 })
        let consumer = CollectingOp(log: log)
        consumer.inject(from: result) { consumer, value in consumer.receive(value) }
        consumer.inject(from: asyncBlock) { consumer, value in consumer.receive(value) }
        consumer.inject(from: invocation) { consumer, value in consumer.receive(value) }
        await OpQueue().addOperations([consumer, invocation, asyncBlock, result], waitUntilFinished: true)
        #expect(log.all == ["body [1, 2, 3]"])
    }

    @Test func manyInjectionsFromProducersInTwoQueuesRunInTheOrderAdded() async {
        let log = EventLog<String>()
        let first = OpQueue()
        let second = OpQueue()
        let producers = (0..<6).map { index in
            ResultOp {
                // The first producers finish last: the injections still run in the order added.
                blockThread(milliseconds: (6 - index) * 3)
                return index * 10
            }
        }
        let consumer = CollectingOp(log: log)
        for producer in producers {
            consumer.inject(from: producer) { consumer, value in consumer.receive(value) }
        }
        #expect(consumer.dependencies.count == producers.count)
        await first.addOperations(producers.enumerated().filter { $0.offset.isMultiple(of: 2) }.map(\.element), waitUntilFinished: false)
        await second.addOperations(producers.enumerated().filter { !$0.offset.isMultiple(of: 2) }.map(\.element) + [consumer], waitUntilFinished: false)
        await consumer.waitUntilFinished()
        await first.waitUntilAllOperationsAreFinished()
        await second.waitUntilAllOperationsAreFinished()
        #expect(consumer.received == [0, 10, 20, 30, 40, 50])
        #expect(log.all == ["body [0, 10, 20, 30, 40, 50]"])
    }

    // MARK: Failed and cancelled producers

    @Test func failedProducerCancelsTheConsumerWithAnInjectionError() async {
        let log = EventLog<String>()
        let producer = ResultOp<Int> { throw InjectionTestFailure(id: 1) }
        producer.name = "failing producer"
        let consumer = CollectingOp(log: log)
        consumer.inject(from: producer) { consumer, value in
            log.append("inject \(value)")
            consumer.receive(value)
        }
        let dependent = BlockOp { log.append("dependent") }
        dependent.addDependency(consumer)
        await OpQueue().addOperations([dependent, consumer, producer], waitUntilFinished: true)
        #expect(log.all == ["dependent"], "neither the injection nor the consumer's body may run")
        #expect(consumer.isCancelled)
        #expect(consumer.isFinished)
        let failure = injectionError(of: consumer)
        #expect(failure?.underlyingError as? InjectionTestFailure == InjectionTestFailure(id: 1))
        #expect(failure?.producer == producer.description)
        #expect(failure?.description.contains("failing producer") == true)
        #expect(dependent.isFinished && !dependent.isCancelled)
    }

    @Test func cancelledProducerCancelsTheConsumerWithCancellationError() async {
        let log = EventLog<String>()
        let producer = ResultOp { 1 }
        let consumer = CollectingOp(log: log)
        consumer.inject(from: producer) { consumer, value in consumer.receive(value) }
        producer.cancel()
        await OpQueue().addOperations([producer, consumer], waitUntilFinished: true)
        #expect(log.all.isEmpty)
        #expect(consumer.isCancelled)
        #expect(injectionError(of: consumer)?.underlyingError is CancellationError)
    }

    @Test func producerCancelledWithAnErrorPassesThatErrorOn() async {
        let log = EventLog<String>()
        let producer = ResultOp { 1 }
        let consumer = CollectingOp(log: log)
        consumer.inject(from: producer) { consumer, value in consumer.receive(value) }
        producer.cancel(with: InjectionTestFailure(id: 2))
        await OpQueue().addOperations([producer, consumer], waitUntilFinished: true)
        #expect(log.all.isEmpty)
        #expect(consumer.isCancelled)
        #expect(injectionError(of: consumer)?.underlyingError as? InjectionTestFailure == InjectionTestFailure(id: 2))
    }

    @Test func oneFailedProducerOfSeveralCancelsTheConsumer() async {
        let log = EventLog<String>()
        let good = ResultOp { 1 }
        let bad = ResultOp<Int> { throw InjectionTestFailure(id: 3) }
        let later = ResultOp { 3 }
        let consumer = CollectingOp(log: log)
        consumer.inject(from: good) { consumer, value in consumer.receive(value) }
        consumer.inject(from: bad) { consumer, value in consumer.receive(value) }
        consumer.inject(from: later) { consumer, value in consumer.receive(value) }
        await OpQueue().addOperations([good, bad, later, consumer], waitUntilFinished: true)
        #expect(log.all.isEmpty)
        #expect(consumer.received == [1], "the injections after the failed one do not run")
        #expect(injectionError(of: consumer)?.underlyingError as? InjectionTestFailure == InjectionTestFailure(id: 3))
    }

    @Test func throwingClosureCancelsTheConsumerWithItsError() async {
        let log = EventLog<String>()
        let producer = ResultOp { -1 }
        let consumer = CollectingOp(log: log)
        consumer.inject(from: producer) { consumer, value in
            if value < 0 { throw InjectionTestFailure(id: value) }
            consumer.receive(value)
        }
        let dependent = BlockOp { log.append("dependent") }
        dependent.addDependency(consumer)
        await OpQueue().addOperations([producer, consumer, dependent], waitUntilFinished: true)
        #expect(log.all == ["dependent"])
        #expect(consumer.isCancelled)
        #expect(consumer.error as? InjectionTestFailure == InjectionTestFailure(id: -1))
        #expect(producer.error == nil)
    }

    // MARK: With conditions

    @Test func injectionsAndConditionsRunInTheOrderAdded() async {
        let log = EventLog<String>()
        let producer = ResultOp { 7 }
        let consumer = CollectingOp(log: log)
        consumer.addCondition(.predicate("before") { _ in
            log.append("condition before")
            return true
        })
        consumer.inject(from: producer) { consumer, value in
            log.append("inject \(value)")
            consumer.receive(value)
        }
        consumer.addCondition(.predicate("after") { op in
            let received = (op as? CollectingOp)?.received ?? []
            log.append("condition after sees \(received)")
            return true
        })
        await OpQueue().addOperations([producer, consumer], waitUntilFinished: true)
        #expect(log.all == ["condition before", "inject 7", "condition after sees [7]", "body [7]"])
    }

    @Test func injectionsAndAsyncConditionsRunInTheOrderAdded() async {
        let log = EventLog<String>()
        let producer = ResultOp { 8 }
        let consumer = CollectingOp(log: log)
        consumer.addCondition(.evaluate("before") { _ in
            await Task.yield()
            log.append("condition before")
            return true
        })
        consumer.inject(from: producer) { consumer, value in
            log.append("inject \(value)")
            consumer.receive(value)
        }
        consumer.addCondition(.evaluate("after") { _ in
            await Task.yield()
            log.append("condition after")
            return true
        })
        await OpQueue().addOperations([producer, consumer], waitUntilFinished: true)
        #expect(log.all == ["condition before", "inject 8", "condition after", "body [8]"])
    }

    @Test func failedConditionBeforeAnInjectionSkipsTheInjection() async {
        let log = EventLog<String>()
        let producer = ResultOp { 9 }
        let consumer = CollectingOp(log: log)
        consumer.addCondition(.predicate("refuses") { _ in false })
        consumer.inject(from: producer) { consumer, value in
            log.append("inject \(value)")
            consumer.receive(value)
        }
        await OpQueue().addOperations([producer, consumer], waitUntilFinished: true)
        #expect(log.all.isEmpty)
        #expect(consumer.isCancelled)
        #expect((consumer.error as? ConditionFailedError)?.condition == "refuses")
    }

    @Test func failedInjectionSkipsTheConditionsAfterIt() async {
        let log = EventLog<String>()
        let producer = ResultOp<Int> { throw InjectionTestFailure(id: 4) }
        let consumer = CollectingOp(log: log)
        consumer.inject(from: producer) { consumer, value in consumer.receive(value) }
        consumer.addCondition(.predicate("after") { _ in
            log.append("condition after")
            return true
        })
        await OpQueue().addOperations([producer, consumer], waitUntilFinished: true)
        #expect(log.all.isEmpty)
        #expect(injectionError(of: consumer)?.underlyingError as? InjectionTestFailure == InjectionTestFailure(id: 4))
    }

    @Test func failedProducerDecidesEvenIfTheConsumerIsCancelledWhileItsConditionsAreChecked() async {
        let log = EventLog<String>()
        let producer = ResultOp<Int> { throw InjectionTestFailure(id: 5) }
        let consumer = CollectingOp(log: log)
        // The cancellation comes while the gates are being passed, before the injection.
        consumer.addCondition(.predicate("cancels its operation") { op in
            op.cancel()
            return true
        })
        consumer.inject(from: producer) { consumer, value in consumer.receive(value) }
        consumer.addCondition(.noFailedDependencies)
        await OpQueue().addOperations([producer, consumer], waitUntilFinished: true)
        #expect(log.all.isEmpty)
        #expect(consumer.isCancelled)
        #expect(injectionError(of: consumer)?.underlyingError as? InjectionTestFailure == InjectionTestFailure(id: 5),
                "the injection comes first, so it decides, cancelled or not; got \(String(describing: consumer.error))")
    }

    @Test func injectionClosureIsSkippedOnceTheConsumerIsCancelled() async {
        let log = EventLog<String>()
        let producer = ResultOp { 6 }
        let consumer = CollectingOp(log: log)
        consumer.addCondition(.predicate("cancels its operation") { op in
            op.cancel()
            return true
        })
        consumer.inject(from: producer) { _, value in
            log.append("inject \(value)")
            throw InjectionTestFailure(id: value)
        }
        await OpQueue().addOperations([producer, consumer], waitUntilFinished: true)
        #expect(log.all.isEmpty, "the value is not needed by a consumer that will not run")
        #expect(consumer.isCancelled)
        #expect(consumer.error == nil)
    }

    // MARK: Other consumers

    @Test func injectionIntoAnAsyncOp() async {
        let log = EventLog<String>()
        let producer = AsyncBlockOp<String> {
            await Task.yield()
            return "payload"
        }
        let consumer = AsyncConsumerOp(log: log)
        consumer.inject(from: producer) { consumer, text in
            consumer.input.withLockedValue { $0 = text }
        }
        let queue = OpQueue()
        await queue.addOperations([consumer, producer], waitUntilFinished: false)
        await consumer.waitUntilFinished()
        #expect(log.all == ["execute payload"])
        #expect(consumer.error == nil)
        await queue.waitUntilAllOperationsAreFinished()
    }

    @Test func injectionFromAFailedProducerIntoAnAsyncOpSkipsItsBody() async {
        let log = EventLog<String>()
        let producer = AsyncBlockOp<String> { throw InjectionTestFailure(id: 5) }
        let consumer = AsyncConsumerOp(log: log)
        consumer.inject(from: producer) { consumer, text in
            consumer.input.withLockedValue { $0 = text }
        }
        await OpQueue().addOperations([consumer, producer], waitUntilFinished: true)
        #expect(log.all.isEmpty)
        #expect(consumer.isCancelled)
        #expect(injectionError(of: consumer)?.underlyingError as? InjectionTestFailure == InjectionTestFailure(id: 5))
    }

    @Test func injectionIntoAGroupAddsChildrenBeforeItStarts() async {
        let log = EventLog<String>()
        let producer = ResultOp { [3, 4] }
        let group = GroupOp()
        group.inject(from: producer) { group, values in
            for value in values {
                group.addChild(BlockOp { log.append("child \(value)") })
            }
        }
        await OpQueue().addOperations([group, producer], waitUntilFinished: true)
        #expect(log.all.sorted() == ["child 3", "child 4"])
        #expect(group.error == nil)
    }

    @Test func failedInjectionIntoAGroupCancelsItsChildren() async {
        let log = EventLog<String>()
        let producer = ResultOp<Int> { throw InjectionTestFailure(id: 6) }
        let group = GroupOp(operations: [BlockOp { log.append("existing child") }])
        group.inject(from: producer) { group, value in
            group.addChild(BlockOp { log.append("child \(value)") })
        }
        let dependent = BlockOp { log.append("dependent") }
        dependent.addDependency(group)
        await OpQueue().addOperations([group, producer, dependent], waitUntilFinished: true)
        #expect(log.all == ["dependent"])
        #expect(group.isCancelled)
        #expect(group.isFinished)
        #expect(injectionError(of: group)?.underlyingError as? InjectionTestFailure == InjectionTestFailure(id: 6))
    }

    // MARK: Started by hand

    @Test func manualStartOfAConsumerRunsTheInjection() {
        let log = EventLog<String>()
        let producer = ResultOp { 11 }
        let consumer = CollectingOp(log: log)
        consumer.inject(from: producer) { consumer, value in
            log.append("inject \(value)")
            consumer.receive(value)
        }
        producer.start()
        consumer.start()
        #expect(log.all == ["inject 11", "body [11]"])
        #expect(consumer.isFinished && !consumer.isCancelled)
    }

    @Test func manualStartAfterInjectingFromAFinishedProducer() {
        let log = EventLog<String>()
        let producer = ResultOp { 12 }
        producer.start()
        let consumer = CollectingOp(log: log)
        consumer.inject(from: producer) { consumer, value in consumer.receive(value) }
        #expect(consumer.isReady)
        consumer.start()
        #expect(log.all == ["body [12]"])
    }

    @Test func manualStartOfAConsumerOfAFailedProducerDoesNotRunItsBody() {
        let log = EventLog<String>()
        let producer = ResultOp<Int> { throw InjectionTestFailure(id: 7) }
        let consumer = CollectingOp(log: log)
        consumer.inject(from: producer) { consumer, value in consumer.receive(value) }
        producer.start()
        consumer.start()
        #expect(log.all.isEmpty)
        #expect(consumer.isFinished && consumer.isCancelled)
        #expect(injectionError(of: consumer)?.underlyingError as? InjectionTestFailure == InjectionTestFailure(id: 7))
    }

    // MARK: Misuse

    @Test(.oneExitTestAtATime) func injectingAfterTheConsumerWasAddedToAQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = OpQueue()
            queue.isSuspended = true
            let producer = ResultOp { 1 }
            let consumer = BlockOp {}
            consumer.name = "late-consumer"
            queue.addOperation(consumer)
            consumer.inject(from: producer) { _, _ in }
        }
        expectStandardError(of: result, toContain: ["inject(from:) was called on", "\"late-consumer\"", "Add injections before"])
    }

    @Test(.oneExitTestAtATime) func injectingAfterTheConsumerWasStartedTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let producer = ResultOp { 1 }
            let consumer = BlockOp {}
            consumer.name = "started-consumer"
            consumer.start()
            consumer.inject(from: producer) { _, _ in }
        }
        expectStandardError(of: result, toContain: ["inject(from:) was called on", "\"started-consumer\""])
    }

    @Test(.oneExitTestAtATime) func anInjectionCopiedToAnotherOperationTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let producer = ResultOp { 1 }
            let consumer = BlockOp {}
            consumer.inject(from: producer) { _, _ in }
            let other = BlockOp {}
            other.name = "copier"
            other.addDependency(producer)
            for condition in consumer.conditions { other.addCondition(condition) }
            producer.start()
            other.start()
        }
        expectStandardError(of: result, toContain: ["was evaluated for", "\"copier\"", "Call inject(from:_:) on every consumer"])
    }

    @Test(.oneExitTestAtATime) func anInjectionInsideACombinatorTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let producer = ResultOp { 1 }
            let consumer = BlockOp {}
            consumer.inject(from: producer) { _, _ in }
            let other = BlockOp {}
            other.addCondition(.all(consumer.conditions))
            other.start()
        }
        expectStandardError(of: result, toContain: ["made by inject(from:_:), was placed inside .all, .any or .not"])
    }

    @Test func anInjectionPassesItsValueOnceWhenTheConditionsAreEvaluatedAgain() {
        let producer = ResultOp { 7 }
        producer.start()
        let injections = EventLog<Int>()
        let consumer = BlockOp {}
        consumer.inject(from: producer) { _, value in injections.append(value) }
        let queue = OpQueue()
        queue.isSuspended = true
        queue.addOperation(consumer)   // ready: the injection runs as it is added
        let late = BlockOp {}
        consumer.addDependency(late)   // the conditions are evaluated again once `late` finished
        queue.addOperation(late)
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(injections.all == [7])
        #expect(consumer.isFinished && !consumer.isCancelled)
    }
}
