/// Tells whether an observed start order on a queue of width 1 is one the rules allow.
///
/// The rules (Dependencies.md, "Priorities never override dependencies"; `Op.queuePriority`):
/// among the operations that are ready, the queue starts one of the highest priority, and among
/// equal priorities the one that became ready first. Operations that became ready in the same step
/// (the dependents of one finished operation) may start in either order. A cancelled operation
/// is started like any other, but finishes without running its body, so it is not seen: the check
/// tries every way the unseen starts can fall between the seen ones, which only matters where
/// several operations became ready in the same step.
struct ModelOrderCheck {
    typealias Entry = ReferenceModel.QueueState.Entry

    let snapshot: ModelOrderSnapshot
    /// The operations whose bodies started in the queue in the phase, in the order they started.
    let observed: [Int]

    /// The state of the queue while the check replays it.
    private struct State {
        var ready: [Entry]
        var waiting: Set<Int>
        var finished: Set<Int> = []
        var inQueue: Set<Int>
        var sequence: Int
        var position = 0
    }

    /// How many states the search may visit before it gives up (and accepts the order).
    private static let budget = 20_000

    /// `nil` if the order is allowed, or why not (with an order the rules allow).
    func violation() -> String? {
        var budget = Self.budget
        if explore(initialState(), budget: &budget) || budget <= 0 { return nil }
        let names = observed.map { "op\($0)" }.joined(separator: ", ")
        return "queues[\(snapshot.queue)] (width 1) started [\(names)] in phase \(snapshot.phase); the rules allow, for example, [\(exampleOrder().map { "op\($0)" }.joined(separator: ", "))] (ready list at the start: \(snapshot.entries.map { "op\($0.op)@\($0.priority)" }.joined(separator: ", ")))"
    }

    private func initialState() -> State {
        let listed = Set(snapshot.entries.map(\.op))
        let inQueue = Set(snapshot.members.filter { $0.value.inQueueAtStart }.map(\.key))
        return State(ready: snapshot.entries, waiting: inQueue.subtracting(listed), inQueue: inQueue,
                     sequence: (snapshot.entries.map(\.sequence).max() ?? 0) + 1)
    }

    /// The entries that may start next: the highest priority, then the earliest step.
    private func front(_ state: State) -> [Entry] {
        guard let top = state.ready.map(\.priority).max() else { return [] }
        let candidates = state.ready.filter { $0.priority == top }
        let first = candidates.map(\.sequence).min()!
        return candidates.filter { $0.sequence == first }
    }

    private func explore(_ state: State, budget: inout Int) -> Bool {
        budget -= 1
        if budget <= 0 { return true }
        if state.position == observed.count { return true }
        for entry in front(state) {
            guard let member = snapshot.members[entry.op] else { continue }
            if member.runs {
                guard observed[state.position] == entry.op else { continue }
                if explore(start(entry, member, in: state), budget: &budget) { return true }
            } else if explore(start(entry, member, in: state), budget: &budget) {
                return true
            }
        }
        return false
    }

    /// Starts `entry`: its body's cancellations and additions list operations (in the order the
    /// body makes them), then it finishes
    /// and its dependents that became ready are listed together.
    private func start(_ entry: Entry, _ member: ModelOrderSnapshot.Member, in state: State) -> State {
        var state = state
        state.ready.removeAll { $0 == entry }
        if member.runs {
            state.position += 1
            // In the body's order: an operation cancelled after another was added is listed
            // after it.
            for effect in member.effects {
                switch effect {
                case .cancels(let target):
                    if state.waiting.contains(target) { list(target, in: &state) }
                case .adds(let target):
                    state.inQueue.insert(target)
                    state.waiting.insert(target)
                    if isReady(target, state) { list(target, in: &state) }
                }
            }
        }
        state.finished.insert(entry.op)
        let stamp = state.sequence
        state.sequence += 1
        for id in state.waiting.sorted() where isReady(id, state) {
            list(id, in: &state, sequence: stamp)
        }
        return state
    }

    private func isReady(_ id: Int, _ state: State) -> Bool {
        guard let member = snapshot.members[id] else { return false }
        return member.isCancelledAtStart || member.deps.allSatisfy(state.finished.contains)
    }

    private func list(_ id: Int, in state: inout State, sequence: Int? = nil) {
        guard let member = snapshot.members[id] else { return }
        state.waiting.remove(id)
        let stamp = sequence ?? state.sequence
        if sequence == nil { state.sequence += 1 }
        state.ready.append(Entry(op: id, priority: member.priority, sequence: stamp))
    }

    /// One order the rules allow (always taking the first candidate), for the report.
    private func exampleOrder() -> [Int] {
        var state = initialState()
        var order: [Int] = []
        while let entry = front(state).first, let member = snapshot.members[entry.op] {
            if member.runs { order.append(entry.op) }
            state = start(entry, member, in: state)
            state.position = 0
        }
        return order
    }
}
