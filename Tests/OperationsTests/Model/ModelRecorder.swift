import Dispatch
import Foundation
import Operations
import Synchronization

/// What happened while one sequence ran against the library, recorded by the operations' bodies,
/// completion blocks and observers (all thread-safe), for ``ModelChecker``.
///
/// Stamps come from one sequentially consistent counter: a stamp taken before an action that
/// causes another is smaller than any stamp taken after that other action.
final class ModelRecorder: @unchecked Sendable {
    // @unchecked Sendable: every mutable property is guarded by `lock`; `stamps` and `phase` are
    // atomics; `operations` and `ids` are written only with `lock` held.

    /// A change delivered to an observer of a `Bool` property.
    struct Change: Hashable, Sendable, CustomStringConvertible {
        enum Property: String, Sendable { case isExecuting, isFinished, isCancelled }
        var property: Property
        var old: Bool?
        var new: Bool?
        var description: String { "\(property.rawValue) \(old.map(String.init) ?? "nil")→\(new.map(String.init) ?? "nil")" }
    }

    /// A body starting.
    struct Start: Sendable {
        var stamp: UInt64
        var phase: Int
        /// Whether it ran inside a Swift task (on the cooperative pool), not on the queue's threads.
        var inTask: Bool
        /// `dependencies` as the body saw it, and those of them not finished.
        var deps: [Int]
        var unfinishedDeps: [Int]
    }

    /// A list change delivered to an observer registered from a handler (`[.old, .new]`).
    struct ListChange: Hashable, Sendable {
        var old: [Int]?
        var new: [Int]?
    }

    /// Everything recorded about one operation.
    struct Record: Sendable {
        var starts: [Start] = []
        var end: UInt64?
        var completions = 0
        /// The completion block found the operation not finished.
        var completedUnfinished = false
        /// Children of a group not finished when the group's completion block ran.
        var unfinishedChildren: [Int] = []
        var observerEvents: [ModelObserverEvent] = []
        var didFinishErrors: [ModelErrorKind] = []
        var changes: [Change] = []
        var nestedFinishChanges: [Change] = []
        var innerDependencies: [ListChange] = []
        var waitsReturned = 0
        /// Waits from callbacks and bodies that began (the driver lets them return before it reads
        /// the final states: a handler that waits steps aside, so an observer barrier passes it).
        var waitsBegun = 0
        /// Children of a `groupWithTail` that were started before the group's `execute()` returned.
        var tailMissed = 0
        var conditionTaskStarted = false
        var conditionTaskEnded = false
        var conditionTaskSawCancellation = false
        /// What a body action could not do (no current queue, no group).
        var actionFailures: [String] = []
        var final: Final?
    }

    /// An operation's state once the sequence is over.
    struct Final: Sendable {
        var isFinished: Bool
        var isCancelled: Bool
        var isExecuting: Bool
        var error: ModelErrorKind
    }

    private let lock = NSLock()
    private var records: [Int: Record] = [:]
    private var operations: [Int: Op] = [:]
    private var ids: [ObjectIdentifier: Int] = [:]
    private var bodyActions: [Int: [ModelBodyAction]] = [:]
    private var callbacks: [Int: Set<ModelCallback>] = [:]
    private var groupOf: [Int: Int] = [:]
    private var childrenOf: [Int: [Int]] = [:]
    private var tokens: [ObservationToken] = []
    private var innerOperations: [Int: [ListChange]] = [:]
    /// Operations that bodies added, and that bodies cancelled (interleaved sequences need it).
    private var added: Set<Int> = []
    private var cancelled: Set<Int> = []
    private let stamps = Atomic<UInt64>(0)
    private let currentPhase = Atomic<Int>(0)
    /// A prefix for names (operations, queues, exclusivity categories) unique to the run.
    let prefix: String
    /// How long a phase may take (waits in bodies are shorter).
    let phaseTimeout: Double

    init(prefix: String, phaseTimeout: Double) {
        self.prefix = prefix
        self.phaseTimeout = phaseTimeout
    }

    var phase: Int {
        get { currentPhase.load(ordering: .sequentiallyConsistent) }
        set { currentPhase.store(newValue, ordering: .sequentiallyConsistent) }
    }

    func stamp() -> UInt64 {
        stamps.add(1, ordering: .sequentiallyConsistent).newValue
    }

    private func locked<Result>(_ body: () -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    /// Whether changes are still recorded (not once the final states are captured: cleaning up
    /// afterwards cancels what is left, and that is no part of the run).
    private var isRecording = true

    func update(_ id: Int, _ body: (inout Record) -> Void) {
        locked {
            guard isRecording else { return }
            updates &+= 1
            body(&records[id, default: Record()])
        }
    }

    /// How many updates were made.
    private var updates: UInt64 = 0

    /// A number that changes whenever something is recorded (an update, or an event stamped):
    /// the runner reads the final states once it holds still.
    var activity: UInt64 {
        locked { updates } &+ stamps.load(ordering: .sequentiallyConsistent)
    }

    /// Whether every wait that began in a callback or a body has returned.
    var allWaitsReturned: Bool {
        locked { records.values.allSatisfy { $0.waitsBegun == $0.waitsReturned } }
    }

    func record(of id: Int) -> Record {
        locked { records[id] ?? Record() }
    }

    // MARK: The operations

    func register(_ operation: Op, id: Int) {
        locked {
            operations[id] = operation
            ids[ObjectIdentifier(operation)] = id
        }
    }

    func registerHelper(_ operation: Op) {
        locked { ids[ObjectIdentifier(operation)] = ReferenceModel.helper }
    }

    func operation(_ id: Int) -> Op {
        locked { operations[id]! }
    }

    var allOperations: [Int: Op] {
        locked { operations }
    }

    /// The model's number of an operation (`-999` for one the sequence did not make).
    func id(of operation: Op) -> Int {
        locked { ids[ObjectIdentifier(operation)] ?? -999 }
    }

    func ids(of operations: [Op]?) -> [Int]? {
        operations.map { list in locked { list.map { ids[ObjectIdentifier($0)] ?? -999 } } }
    }

    func setBodyActions(_ id: Int, _ actions: [ModelBodyAction]) {
        locked { bodyActions[id] = actions }
    }

    func addBodyAction(_ id: Int, _ action: ModelBodyAction) {
        locked { bodyActions[id, default: []].append(action) }
    }

    func addCallback(_ id: Int, _ callback: ModelCallback) {
        locked { _ = callbacks[id, default: []].insert(callback) }
    }

    func hasCallback(_ id: Int, _ callback: ModelCallback) -> Bool {
        locked { callbacks[id]?.contains(callback) ?? false }
    }

    /// Whether the groups' children were given by the model (a staged sequence), rather than
    /// noted as they join.
    private var childrenAreGiven = false

    /// The children of each group, as the model has them at the end (a staged sequence).
    func useChildren(_ children: [Int: [Int]]) {
        locked {
            childrenOf = children
            childrenAreGiven = true
        }
    }

    func noteChild(_ child: Int, of group: Int) {
        locked {
            groupOf[child] = group
            if !childrenAreGiven { childrenOf[group, default: []].append(child) }
        }
    }

    func children(of group: Int) -> [Int] {
        locked { childrenOf[group] ?? [] }
    }

    /// Barriers: the number of times each operation's (or queue's) barrier observer was called.
    /// A change made after the others is delivered after them, in order, so once the barrier's
    /// change has been delivered, no earlier change is still on its way (another thread may be
    /// delivering an operation's changes after the operation has moved on).
    private var barriers: [Int: Int] = [:]
    private var queueBarriers: [Int: Int] = [:]

    func passBarrier(of id: Int) { locked { barriers[id, default: 0] += 1 } }
    func passQueueBarrier(of queue: Int) { locked { queueBarriers[queue, default: 0] += 1 } }
    func barrierCount(of id: Int) -> Int? { locked { barriers[id] } }
    func queueBarrierCount(of queue: Int) -> Int? { locked { queueBarriers[queue] } }
    var operationsWithBarriers: [Int] { locked { Array(barriers.keys) } }
    var queuesWithBarriers: [Int] { locked { Array(queueBarriers.keys) } }

    var addedByBodies: Set<Int> { locked { added } }
    var cancelledByBodies: Set<Int> { locked { cancelled } }

    func keep(_ token: ObservationToken) {
        locked { tokens.append(token) }
    }

    func invalidateObservations() {
        let all = locked { tokens }
        for token in all { token.invalidate() }
        locked { tokens = [] }
    }

    func noteInnerOperations(of queue: Int, _ change: ListChange) {
        locked { if isRecording { innerOperations[queue, default: []].append(change) } }
    }

    func innerOperations(of queue: Int) -> [ListChange] {
        locked { innerOperations[queue] ?? [] }
    }

    // MARK: Bodies

    /// Records a body starting and performs the actions declared for it.
    func bodyStarts(_ operation: Op, id: Int) {
        let stamp = stamp()
        let phase = self.phase
        let inTask = withUnsafeCurrentTask { $0 != nil }
        let dependencies = operation.dependencies
        let deps = ids(of: dependencies) ?? []
        let unfinished = dependencies.filter { !$0.isFinished }
        let unfinishedIDs = ids(of: unfinished) ?? []
        update(id) { $0.starts.append(Start(stamp: stamp, phase: phase, inTask: inTask, deps: deps, unfinishedDeps: unfinishedIDs)) }
        if let group = operation.group as? ModelGroupOp, group.signalsAfterExecute {
            if !group.waitForTail() {
                update(id) { $0.tailMissed += 1 }
            }
        }
        let actions = locked { bodyActions[id] ?? [] }
        for action in actions {
            perform(action, by: operation, id: id)
        }
    }

    func bodyEnds(_ id: Int) {
        let stamp = stamp()
        update(id) { $0.end = stamp }
    }

    private func perform(_ action: ModelBodyAction, by operation: Op, id: Int) {
        switch action {
        case .cancel(let target):
            locked { if isRecording { _ = cancelled.insert(target) } }
            self.operation(target).cancel()
        case .addToCurrentQueue(let target):
            guard let queue = OpQueue.current else {
                update(id) { $0.actionFailures.append("OpQueue.current was nil in its body") }
                return
            }
            noteAdded(target, by: id)
            queue.addOperation(self.operation(target))
        case .produce(let target):
            noteAdded(target, by: id)
            operation.produce(self.operation(target))
        case .addToOwnGroup(let target):
            guard let group = Op.current?.group else {
                update(id) { $0.actionFailures.append("Op.current?.group was nil in its body") }
                return
            }
            noteAdded(target, by: id)
            group.addChild(self.operation(target))
        case .waitForDependency(let dependency):
            update(id) { $0.waitsBegun += 1 }
            self.operation(dependency).waitUntilFinished()
            update(id) { $0.waitsReturned += 1 }
        }
    }

    /// An operation a body adds joins the body's group, if the body's operation is a child.
    private func noteAdded(_ target: Int, by actor: Int) {
        locked {
            guard isRecording else { return }
            added.insert(target)
            if let group = groupOf[actor] {
                groupOf[target] = group
                if !childrenAreGiven { childrenOf[group, default: []].append(target) }
            }
        }
    }

    // MARK: Completion

    func completed(_ id: Int, _ operation: Op?) {
        guard let operation else { return }
        let finished = operation.isFinished
        let unfinishedChildren = children(of: id).filter { !self.operation($0).isFinished }
        let waits = hasCallback(id, .completionWaits)
        // One update: the runner, which reads the completion as "settled" and then waits for the
        // waits begun to return, must not see the completion without the wait it begins (it
        // then read the state while the wait had not begun, and counted it as never returned).
        update(id) {
            $0.completions += 1
            if !finished { $0.completedUnfinished = true }
            if operation is GroupOp { $0.unfinishedChildren = unfinishedChildren }
            if waits { $0.waitsBegun += 1 }
        }
        if waits {
            operation.waitUntilFinished()
            update(id) { $0.waitsReturned += 1 }
        }
    }

    func completions(of id: Int) -> Int {
        locked { records[id]?.completions ?? 0 }
    }

    /// Stops recording unless the task of a condition that waits for its cancellation has started
    /// and not ended; whether it stopped. A cancelled operation finishes without waiting for
    /// that task, which may start only afterwards (it still runs, and sees the cancellation at
    /// once): stopping between its start and its end would read it as a task that never ended.
    func stopRecordingUnlessAConditionTaskRuns() -> Bool {
        locked {
            if records.values.contains(where: { $0.conditionTaskStarted && !$0.conditionTaskEnded }) { return false }
            isRecording = false
            return true
        }
    }

    /// Stops recording, then reads every operation's state: the records end before the states
    /// are read, so that nothing recorded comes after them.
    func captureFinalStates() {
        locked { isRecording = false }
        for (id, operation) in allOperations {
            let final = Final(isFinished: operation.isFinished, isCancelled: operation.isCancelled,
                              isExecuting: operation.isExecuting, error: ModelErrorKind(operation.error))
            locked { records[id, default: Record()].final = final }
        }
    }
}
