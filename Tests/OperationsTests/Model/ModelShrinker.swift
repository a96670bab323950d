/// Shortens a failing sequence: deletes steps (halves, then quarters, down to single steps), then
/// simplifies what is left (smaller batches, fans and storms, plainer operations and conditions,
/// narrower queues), keeping each change only if the sequence still fails in the same way.
///
/// Every candidate is normalized by the ``ReferenceModel`` first (a deletion can make later steps
/// illegal, and they go too), so the result is always a sequence the model predicts.
struct ModelShrinker {
    /// Plays a candidate; returns its failure, or `nil` if it passed.
    let evaluate: (ModelSequence) async -> ModelFailure?
    /// The shapes of known defects that candidates must not take (those the failing sequence was
    /// generated without).
    var defects = ModelKnownDefects.none
    /// The most candidates to play.
    var budget = 400

    /// The shortest failing sequence found from `sequence`, which failed with `failure`, and its
    /// failure; and how many candidates were played.
    func shrink(_ sequence: ModelSequence, failing failure: ModelFailure) async -> (sequence: ModelSequence, failure: ModelFailure, tries: Int) {
        var best = ReferenceModel.normalized(sequence, defects: defects).sequence
        var bestFailure = failure
        var tried: Set<ModelSequence> = [best]
        var tries = 0

        func attempt(_ candidate: ModelSequence) async -> Bool {
            let normalized = ReferenceModel.normalized(candidate, defects: defects).sequence
            guard tries < budget, normalized.commands.count <= best.commands.count, tried.insert(normalized).inserted else { return false }
            tries += 1
            guard let found = await evaluate(normalized), found.category == failure.category else { return false }
            best = normalized
            bestFailure = found
            return true
        }

        var changed = true
        while changed && tries < budget {
            changed = false
            // Delete chunks, largest first, from the end (later steps depend on earlier ones).
            var size = max(1, best.commands.count / 2)
            while size >= 1 && tries < budget {
                var end = best.commands.count
                var deletedAny = false
                while end > 0 && tries < budget {
                    let start = max(0, end - size)
                    var candidate = best
                    candidate.commands.removeSubrange(start..<min(end, candidate.commands.count))
                    if await attempt(candidate) {
                        deletedAny = true
                        changed = true
                        end = min(start, best.commands.count)
                    } else {
                        end = start
                    }
                }
                if !deletedAny { size /= 2 }
            }
            // Simplify the steps left.
            var index = 0
            while index < best.commands.count && tries < budget {
                for simpler in Self.simplifications(of: best.commands[index], queueCount: best.queueWidths.count) {
                    var candidate = best
                    candidate.commands[index] = simpler
                    if await attempt(candidate) {
                        changed = true
                        break
                    }
                }
                index += 1
            }
            // Narrower queues, and fewer.
            for queue in best.queueWidths.indices where best.queueWidths[queue] != 1 && tries < budget {
                var candidate = best
                candidate.queueWidths[queue] = 1
                if await attempt(candidate) { changed = true }
            }
            if best.queueWidths.count > 1, !best.commands.contains(where: { Self.usesQueue($0, best.queueWidths.count - 1) }) {
                var candidate = best
                candidate.queueWidths.removeLast()
                if await attempt(candidate) { changed = true }
            }
        }
        return (best, bestFailure, tries)
    }

    /// Simpler versions of a step, simplest first (an operation that a body or a group adds is
    /// rather added to a queue directly).
    static func simplifications(of command: ModelCommand, queueCount: Int = 1) -> [ModelCommand] {
        switch command {
        case .onRun(_, let action) where action.added != nil:
            return (0..<queueCount).map { .enqueue([action.added!], queue: $0) }
        case .addChild(let id, _):
            return (0..<queueCount).map { .enqueue([id], queue: $0) }
        case .make(let id, let kind):
            return [ModelOpKind.sync, .group].filter { $0 != kind && $0.isGroup == kind.isGroup }.map { .make(id, $0) }
        case .enqueue(let ids, let queue) where ids.count > 1:
            return [.enqueue([ids[0]], queue: queue), .enqueue(Array(ids.dropFirst()), queue: queue)]
        case .fan(let on, let first, let count, let queue) where count > 1:
            return Set([1, count / 2, 15, 16, count - 1]).filter { $0 >= 1 && $0 < count }.sorted()
                .map { .fan(on: on, first: first, count: $0, queue: queue) }
        case .priorityStorm(let id, let changes) where changes > 1:
            return Set([1, 2, changes / 2, changes - 1, 65_536]).filter { $0 >= 1 && $0 < changes }.sorted()
                .map { .priorityStorm(id, changes: $0) }
        case .addCondition(let id, let condition) where condition != .predicate(true):
            return [.addCondition(id, .predicate(true))]
        case .cancelWithError(let id):
            return [.cancel(id)]
        case .pause(let microseconds) where microseconds > 0:
            return [.pause(0)]
        default:
            return []
        }
    }

    static func usesQueue(_ command: ModelCommand, _ queue: Int) -> Bool {
        switch command {
        case .enqueue(_, let used), .fan(_, _, _, let used), .observeOperationsFromHandler(let used),
             .keepSuspended(let used), .suspend(let used), .resume(let used):
            used == queue
        default:
            false
        }
    }
}
