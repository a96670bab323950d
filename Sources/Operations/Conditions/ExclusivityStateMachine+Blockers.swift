// What keeps a waiting request from being granted, for diagnostics (`OpQueue.dump()`): the same
// rules as granting, read without changing anything.

extension ExclusivityStateMachine {
    /// The categories that keep `operation`'s request waiting: held by someone else than its
    /// ancestors, or (held by nobody) reserved by an older waiting request. `nil` if `operation`
    /// does not wait (it holds its categories, or never asked); empty if nothing holds it any more
    /// (the next release grants it).
    func blockers(of operation: ObjectIdentifier) -> [Blocker]? {
        guard let index = waiting.firstIndex(where: { $0.operation == operation }) else { return nil }
        let request = waiting[index]
        let older = waiting[..<index]
        // As in `isAvailable(_:reserved:)`: inside a group that holds a category, reservations
        // do not count.
        let ignoresReservations = !request.ancestors.isEmpty
            && holders.values.contains { stack in stack.contains { request.ancestors.contains($0) } }
        var blockers: [Blocker] = []
        for category in request.categories {
            if let stack = holders[category], let innermost = stack.last {
                guard !request.ancestors.contains(innermost) else { continue }
                blockers.append(Blocker(category: category, holders: stack.filter { !request.ancestors.contains($0) },
                                        earlierRequests: []))
            } else if !ignoresReservations {
                let reserving = older.filter { $0.categories.contains(category) }.map(\.operation)
                if !reserving.isEmpty {
                    blockers.append(Blocker(category: category, holders: [], earlierRequests: reserving))
                }
            }
        }
        return blockers
    }
}
