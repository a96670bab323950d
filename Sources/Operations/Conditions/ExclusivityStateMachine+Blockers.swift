// What keeps a waiting request from being granted, for diagnostics (`OpQueue.dump()`): the same
// rules as granting, read without changing anything.

extension ExclusivityStateMachine {
    /// The categories that keep `operation`'s request waiting: held by someone else than its
    /// ancestors, or (held by nobody, or by an ancestor) reserved by an older waiting request. `nil` if `operation`
    /// does not wait (it holds its categories, or never asked); empty if nothing holds it any more
    /// (its turn came: it takes the categories when its queue starts it).
    ///
    /// - Complexity: O(requests waiting for its categories): for diagnostics only.
    func blockers(of operation: ObjectIdentifier) -> [Blocker]? {
        guard let (request, bypasses) = waitingRequest(of: operation) else { return nil }
        var blockers: [Blocker] = []
        for category in request.categories {
            let stack = holders(of: category)
            if let innermost = stack.last, !request.ancestors.contains(innermost) {
                blockers.append(Blocker(category: category, holders: stack.filter { !request.ancestors.contains($0) },
                                        earlierRequests: []))
            } else {
                // As in `request(_:)`: inside a group that holds a category, only the reservations
                // of requests from inside the same holder count.
                let reserving = bypasses ? olderBypassers(in: category, than: operation)
                    : olderWaiters(in: category, than: request.sequence)
                if !reserving.isEmpty {
                    blockers.append(Blocker(category: category, holders: [], earlierRequests: reserving))
                }
            }
        }
        return blockers
    }
}
