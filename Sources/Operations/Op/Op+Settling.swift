import Synchronization

// What a finished operation holds strongly: never a loop of strong references among finished
// operations, and a weak reference (which gives the operation a side table and sends its every
// retain and release down the runtime's slow path) only where a loop is possible.

extension Op {
    /// The operation is finished for good and needs its dependencies no more: it holds weakly,
    /// from now on, those that could be on a loop of dependencies, so that a loop among finished
    /// operations does not keep them alive (`dependencies` still lists them while they live).
    ///
    /// Every loop has an edge to an operation created after its dependent (following only edges
    /// to older operations never comes back), so only newer dependencies are candidates. Of those,
    /// it keeps holding strongly the ones from which strong references can never lead back
    /// (``mayBeHeldStronglyByAFinishedOperation()``): one that never had a dependency (a
    /// one-operation fan-in keeps all of its dependencies), and one that is sealed or can be
    /// sealed now (a chain built last operation first keeps every link). The others are held
    /// weakly.
    ///
    /// Then the operation seals itself if it can (``seal()``), so that an older operation that
    /// holds it and settles after it keeps it strongly without looking further.
    ///
    /// The dependencies are looked at after unlocking: sealing one takes its lock. A dependency
    /// removed or added meanwhile changes nothing: weakening one that is not listed any more does
    /// nothing, and one added to a finished operation chose how it is held as it was added
    /// (see ``addDependency(_:)``). One added before the dependencies are read moves them to the
    /// settled list, which is where they are read from then.
    final func settleDependencies() {
        let (newer, weakensEvery) = withState { machine in
            (machine.newerDependencies(than: serial), machine.weakensEveryDependency)
        }
        if weakensEvery {
            withStateKeepingDependencies { $0.weaken([]) }
            return
        }
        var weakened: Set<ObjectIdentifier> = []
        for dependency in newer where !dependency.mayBeHeldStronglyByAFinishedOperation() {
            weakened.insert(ObjectIdentifier(dependency))
        }
        if weakened.isEmpty {
            _ = withState { sealIfPossible($0) }
        } else {
            withStateKeepingDependencies { machine in
                machine.weaken(weakened)
                sealIfPossible(machine)
            }
        }
    }

    /// Whether a finished operation may hold this one strongly as a dependency, without a loop of
    /// strong references among finished operations ever going through the edge: this operation is
    /// a dead end (``isADeadEnd()``), or it is sealed now (``seal()``).
    final func mayBeHeldStronglyByAFinishedOperation() -> Bool {
        isADeadEnd() || seal()
    }

    /// Whether strong references from this operation can never lead back to the one holding it,
    /// known without looking at its dependencies: it is sealed, or it never had a dependency.
    ///
    /// The second case marks it (``isHeldByFinishedOperation``): if it gets a dependency later, it
    /// holds every dependency weakly once finished, so that it has no strong reference left among
    /// finished operations. The two sides meet without a lock: this side marks the operation and
    /// then reads whether it had a dependency; ``addDependency(_:)`` records the first dependency
    /// and then reads the mark, each with a full fence in between, so at least one of them sees
    /// the other.
    final func isADeadEnd() -> Bool {
        if isSealed { return true }
        markHeldByFinishedOperation()
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        return flags.load(ordering: .relaxed) & Flags.hadDependencies == 0
    }

    /// Seals the operation if every dependency it holds strongly is a dead end
    /// (``isADeadEnd()``); returns whether it is sealed.
    ///
    /// Once an operation is sealed, getting another dependency makes it hold all of its
    /// dependencies weakly once it is finished (``addDependency(_:)`` reads the mark under the lock
    /// this takes). So among finished operations, the strong references from a sealed one only
    /// ever go to dead ends that were dead ends before it was sealed, or it has none left. Following them never comes
    /// back to it: no loop of strong references among finished operations goes through a sealed
    /// operation, and none through one that never had a dependency. A chain built last operation
    /// first is sealed link by link as it settles, and held strongly (a link that settles before
    /// the one it holds may hold that one weakly, if the link behind it has not settled yet).
    ///
    /// Looks one step only: an operation with a dependency that is not a dead end yet is not
    /// sealed (and is held weakly by the one asking), however long the path behind it.
    final func seal() -> Bool {
        withState { sealIfPossible($0) }
    }

    /// ``seal()``, with the lock held.
    @discardableResult
    private final func sealIfPossible(_ machine: borrowing OpStateMachine) -> Bool {
        if isSealed { return true }
        guard machine.everyStrongDependency(satisfies: { $0.isADeadEnd() }) else { return false }
        marks.bitwiseOr(Marks.sealed, ordering: .relaxed)
        return true
    }
}
