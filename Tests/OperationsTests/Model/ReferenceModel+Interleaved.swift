// What an interleaved sequence must end with, whatever the timing: the operations that finish
// once every queue runs, given what the bodies did (which depends on timing, and is recorded).

extension ReferenceModel {
    /// The operations that finish in an interleaved sequence once every queue is resumed: those
    /// that got into a queue, or into a group that starts, and are cancelled or whose dependencies
    /// all finish. `added` are the operations that bodies added (the runner saw it),
    /// `cancelledByBodies` those that bodies cancelled.
    ///
    /// A dependency added to an operation in a running queue may come after it started: with
    /// `bindingOnly`, only the dependencies it had when it joined (and kept) count, which gives
    /// every operation that may finish; otherwise all count, which gives those that must.
    func interleavedFinishers(added: Set<Int>, cancelledByBodies: Set<Int>, bindingOnly: Bool = false) -> Set<Int> {
        var finishing = Set(ops.keys.filter { ops[$0]!.life == .finished })
        func effectiveHome(_ id: Int) -> OpState.Home? { self.effectiveHome(id, added: added) }
        func children(of group: Int) -> [Int] {
            ops.keys.sorted().filter { id in
                if case .child(group)? = effectiveHome(id) { return true }
                return false
            }
        }
        /// Whether the operation is cancelled before it starts, for sure (or possibly, when
        /// giving every operation that may finish): a cancelled operation ignores its
        /// dependencies. A child is cancelled when its group starts cancelled, or when the group's
        /// conditions (evaluated once the group's own dependencies finished) fail.
        func ignoresDependencies(_ id: Int) -> Bool {
            if ops[id]!.cancelled || cancelledByBodies.contains(id) { return true }
            if case .child(let group)? = effectiveHome(id) { return cancelsChildren(group) }
            return false
        }
        func cancelsChildren(_ group: Int) -> Bool {
            let op = ops[group]!
            return ignoresDependencies(group) || op.neverRunsByItsConditions || (bindingOnly && !op.conditions.isEmpty)
        }
        func isReady(_ id: Int) -> Bool {
            let op = ops[id]!
            let deps = bindingOnly ? op.bindingDeps : op.deps
            return ignoresDependencies(id) || deps.allSatisfy { $0 == Self.helper || finishing.contains($0) }
        }
        var started: Set<Int> = []
        func isInPlay(_ id: Int) -> Bool {
            switch effectiveHome(id) {
            case .queue?: return true
            case .child(let group)?: return started.contains(group)
            default: return false
            }
        }
        var progress = true
        while progress {
            progress = false
            for id in ops.keys.sorted() where !finishing.contains(id) && isInPlay(id) && isReady(id) {
                if ops[id]!.kind.isGroup {
                    if started.insert(id).inserted { progress = true }
                    if children(of: id).allSatisfy(finishing.contains) {
                        finishing.insert(id)
                        progress = true
                    }
                } else {
                    finishing.insert(id)
                    progress = true
                }
            }
        }
        return finishing
    }

    /// Where an operation went in an interleaved sequence: a reserved one, where the operation
    /// whose body added it is (if it did: `added`); a held one, where the operation holding it went.
    func effectiveHome(_ id: Int, added: Set<Int>) -> OpState.Home? {
        let op = ops[id]!
        switch op.home {
        case .reserved(let by):
            return added.contains(id) ? effectiveHome(by, added: added) : nil
        case .heldByCondition(let owner):
            return effectiveHome(owner, added: added)
        case .free: return nil
        case .queue, .child: return op.home
        }
    }

    /// The operations that went into `queue` in an interleaved sequence.
    func interleavedMembers(of queue: Int, added: Set<Int>) -> [Int] {
        ops.keys.sorted().filter { effectiveHome($0, added: added) == .queue(queue) }
    }
}
