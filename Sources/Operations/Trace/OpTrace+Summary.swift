extension OpTrace {
    /// A report for people: how many operations ran where, how long they spent waiting for
    /// dependencies, then waiting to start, and running, the critical path, and the
    /// longest operations.
    ///
    /// ```text
    /// OpTrace: 24 operations over 412.6 ms on 2 queues and 3 threads (23 succeeded, 1 failed)
    /// Time in operations (summed): waiting for dependencies 1.21 s, waiting to start 310.2 ms, running 802.4 ms
    /// Critical path (3 operations, 401.9 ms from the first enqueued to the last finished):
    ///   fetch manifest: ran 12.1 ms after waiting 6 µs
    ///   download b.bin: ran 350.3 ms after waiting 31 µs (to start 31 µs)
    ///   checksum b.bin: ran 38.9 ms after waiting 12 µs
    /// Longest operations:
    ///   350.3 ms  download b.bin (BlockOp, queue "downloads")
    ///   …
    /// ```
    ///
    /// An operation's wait for dependencies runs from when it was enqueued until its last
    /// dependency finished; its wait to start, from then until it started: for a slot in its
    /// queue, for its conditions or exclusivity, behind a barrier, or in a suspended queue.
    public var summary: String {
        var lines: [String] = []
        let queues = Set(operations.compactMap(\.queueName))
        let threads = Set(operations.compactMap(\.thread) + operations.compactMap(\.finishThread))
        var counts: [Outcome: Int] = [:]
        for operation in operations { counts[operation.outcome, default: 0] += 1 }
        var outcomes: [String] = []
        for outcome in [Outcome.succeeded, .failed, .cancelled, .unfinished] {
            if let count = counts[outcome] { outcomes.append("\(count) \(outcome.word)") }
        }
        lines.append("OpTrace: \(counted(operations.count, "operation")) over \(OpTrace.format(duration)) on \(counted(queues.count, "queue")) and \(counted(threads.count, "thread"))"
            + (outcomes.isEmpty ? "" : " (\(outcomes.joined(separator: ", ")))"))
        guard !operations.isEmpty else { return lines.joined(separator: "\n") + "\n" }

        var waitingForDependencies = Duration.zero, waitingToStart = Duration.zero, running = Duration.zero
        for operation in operations {
            if let wait = waitingTimes(of: operation) {
                waitingForDependencies += wait.forDependencies
                waitingToStart += wait.toStart
            }
            running += operation.runningTime ?? .zero
        }
        lines.append("Time in operations (summed): waiting for dependencies \(OpTrace.format(waitingForDependencies)), waiting to start \(OpTrace.format(waitingToStart)), running \(OpTrace.format(running))")

        let path = criticalPath
        if let first = path.first, let last = path.last, let end = last.finishedAt {
            let begin = first.enqueuedAt ?? first.startedAt ?? end
            lines.append("Critical path (\(counted(path.count, "operation")), \(OpTrace.format(end - begin)) from the first enqueued to the last finished):")
            for operation in path {
                lines.append("  \(operation.label): \(pathStep(operation))")
            }
        }

        let longest = longestOperations(10)
        if !longest.isEmpty {
            lines.append("Longest operations:")
            let widths = longest.map { OpTrace.format($0.runningTime!).count }.max() ?? 0
            for operation in longest {
                let time = OpTrace.format(operation.runningTime!)
                var place = operation.typeName
                if let queueName = operation.queueName { place += ", queue \"\(queueName)\"" }
                if let groupName = operation.groupName { place += ", group \"\(groupName)\"" }
                lines.append("  " + String(repeating: " ", count: widths - time.count) + "\(time)  \(operation.label) (\(place))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The `count` operations that ran longest, longest first (a selection, not a sort of all).
    private func longestOperations(_ count: Int) -> [Operation] {
        var longest: [(time: Duration, position: Int)] = []
        for (position, operation) in operations.enumerated() {
            guard let time = operation.runningTime else { continue }
            if longest.count == count {
                guard time > longest[count - 1].time else { continue }
                longest.removeLast()
            }
            let insertion = longest.firstIndex { $0.time < time } ?? longest.count
            longest.insert((time, position), at: insertion)
        }
        return longest.map { operations[$0.position] }
    }

    /// What one step of the critical path did.
    private func pathStep(_ operation: Operation) -> String {
        var text: String
        if let running = operation.runningTime {
            text = "ran \(OpTrace.format(running))"
        } else {
            text = operation.outcome == .cancelled ? "cancelled before it started" : "did not finish"
        }
        if let wait = waitingTimes(of: operation) {
            let total = wait.forDependencies + wait.toStart
            var parts: [String] = []
            if wait.forDependencies > .zero { parts.append("for dependencies \(OpTrace.format(wait.forDependencies))") }
            if wait.toStart > .zero { parts.append("to start \(OpTrace.format(wait.toStart))") }
            text += " after waiting \(OpTrace.format(total))" + (parts.count > 1 ? " (\(parts.joined(separator: ", ")))" : "")
        }
        return text
    }

    /// The chain of operations that decided when the last operation finished: it ends with the
    /// operation that finished last, and each operation before it is the one that held the next
    /// back (the dependency that finished last; for a group, its child that finished last; for a
    /// group's child, also what held the group back).
    ///
    /// Shortening an operation off this path does not make the recorded work finish sooner.
    public var criticalPath: [Operation] {
        var last: Int?
        for (position, operation) in operations.enumerated() {
            guard let finishedAt = operation.finishedAt else { continue }
            if last.map({ finishedAt > operations[$0].finishedAt! }) ?? true { last = position }
        }
        guard let last else { return [] }
        var current = operations[last]
        var childrenOfGroups: [UInt64: [UInt64]] = [:]
        for operation in operations {
            if let groupID = operation.groupID { childrenOfGroups[groupID, default: []].append(operation.id) }
        }
        var path = [current]
        var visited: Set<UInt64> = [current.id]
        while true {
            let children = childrenOfGroups[current.id] ?? []
            // A group's child starts only once its group runs: what held the group held it.
            let group = current.groupID.flatMap { self[id: $0] }
            let inherited = group?.dependencyIDs ?? []
            let candidates = (current.dependencyIDs + children + inherited)
                .compactMap { self[id: $0] }
                .filter { $0.finishedAt != nil && !visited.contains($0.id) }
            guard let holder = candidates.max(by: { $0.finishedAt! < $1.finishedAt! }) else { break }
            // A group waits for its children; a dependency that finished before the operation
            // (or, for an inherited one, its group) was enqueued held nothing back.
            if !children.contains(holder.id) {
                let waiter = current.dependencyIDs.contains(holder.id) ? current : (group ?? current)
                if let enqueuedAt = waiter.enqueuedAt, holder.finishedAt! < enqueuedAt { break }
            }
            path.append(holder)
            visited.insert(holder.id)
            current = holder
        }
        return path.reversed()
    }

    /// How long `operation` waited for its dependencies and then to start, if it was enqueued
    /// and started while recording.
    func waitingTimes(of operation: Operation) -> (forDependencies: Duration, toStart: Duration)? {
        guard let enqueuedAt = operation.enqueuedAt, let startedAt = operation.startedAt else { return nil }
        var ready = enqueuedAt
        for dependencyID in operation.dependencyIDs {
            if let finishedAt = self[id: dependencyID]?.finishedAt, finishedAt > ready { ready = finishedAt }
        }
        ready = min(ready, startedAt)
        return (ready - enqueuedAt, startedAt - ready)
    }

    /// `count` and `noun`, plural unless the count is one.
    private func counted(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
    }

    /// A duration for people: "640 ns", "12 µs", "3.4 ms", "1.23 s".
    static func format(_ duration: Duration) -> String {
        let nanoseconds = max(0, duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
        func decimal(_ value: Int64, unit: Int64, digits: Int, suffix: String) -> String {
            var scale: Int64 = 1
            for _ in 0..<digits { scale *= 10 }
            let scaled = (value * scale + unit / 2) / unit
            let whole = scaled / scale, fraction = String(scaled % scale)
            return digits == 0 ? "\(whole) \(suffix)" : "\(whole).\(String(repeating: "0", count: digits - fraction.count))\(fraction) \(suffix)"
        }
        switch nanoseconds {
        case ..<1_000: return "\(nanoseconds) ns"
        case ..<1_000_000: return decimal(nanoseconds, unit: 1_000, digits: 0, suffix: "µs")
        case ..<1_000_000_000: return decimal(nanoseconds, unit: 1_000_000, digits: 1, suffix: "ms")
        default: return decimal(nanoseconds, unit: 1_000_000_000, digits: 2, suffix: "s")
        }
    }
}
