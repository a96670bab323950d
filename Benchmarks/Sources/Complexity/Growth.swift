import Operations

/// The workloads of the complexity checks: each grows one structure of the library with `n`
/// and returns how long the part that grows took.
///
/// Every workload builds its operations in a function (closures written in `main.swift`'s
/// top-level code are isolated to the main actor, and Swift would check the executor each time
/// one runs), waits with a ``Countdown`` rather than a library wait (which searches for cycles
/// when it lasts), and releases what it built before its clock stops, unless it says otherwise:
/// a structure that is slow to take down is as slow as one that is slow to build.
enum Growth {
    /// `operations` from the middle outwards (m, m + 1, m - 1, m + 2, ...), the order in which
    /// the workloads remove, re-add or change them: each is near the middle of what is left, so a
    /// list searched from either end costs its length every time and cannot hide, while the
    /// accesses stay close to sequential (a random order would measure cache misses, which grow
    /// with N once the operations outgrow the caches, and not the library).
    static func fromTheMiddle(_ operations: [Op]) -> [Op] {
        var result: [Op] = []
        result.reserveCapacity(operations.count)
        var below = operations.count / 2 - 1
        var above = operations.count / 2
        while below >= 0 || above < operations.count {
            if above < operations.count {
                result.append(operations[above])
                above += 1
            }
            if below >= 0 {
                result.append(operations[below])
                below -= 1
            }
        }
        return result
    }

    /// `n` empty operations whose bodies tick `done`.
    static func ticking(_ n: Int, _ done: Countdown) -> [Op] {
        (0..<n).map { _ in BlockOp { done.tick() } }
    }
}
