import OperationsRuntimeShims

/// How a dependency lists an operation waiting for it: a reference that neither retains the
/// dependent nor is weak.
///
/// A dependent holds its dependencies strongly; if the dependencies held their dependents
/// strongly too, an operation graph that never runs would never be released. A weak reference
/// would break that loop, but it gives every dependent a side table, and each retain and release
/// of such an object then takes Swift's slower reference-counting path, on every operation of a
/// dependency chain. So a dependency lists its dependents unretained, and the two sides clear
/// the link between them:
///
/// - The dependent, when it is deinitialized, removes itself from each unfinished dependency's
///   list, under that dependency's lock, before it releases its dependencies
///   (``Op/detachFromUnfinishedDependencies()``). Until it has done so, its memory stays valid.
/// - The dependency, when it finishes, takes its list under its own lock and retains each
///   dependent with ``retainIfAlive()``, which refuses an object whose deinitialization has
///   begun; that dependent is skipped. It cannot have finished its deinitialization (and freed
///   its memory) meanwhile: for that it must take the same lock, or see the dependency's finished
///   flag, which is published (with release ordering) only after the list is taken. So a
///   deinitializing dependent that reads the flag needs no lock: the dependency is done with the
///   list.
///
/// A removed link is dropped from the list at once (see ``DependentList``): it is never read again.
struct DependentLink {
    /// The dependent, not retained.
    let reference: Unmanaged<Op>
    /// The dependent's serial number, known without touching it.
    let serial: UInt64

    init(_ operation: Op) {
        reference = .passUnretained(operation)
        serial = operation.serial
    }

    /// Whether this links `operation`, compared by identity without touching it.
    func links(_ operation: Op) -> Bool {
        reference.toOpaque() == Unmanaged.passUnretained(operation).toOpaque()
    }

    /// A strong reference to the dependent, or `nil` if its deinitialization has begun.
    ///
    /// Call only with the lock of the dependency that lists it held: that lock keeps a
    /// deinitializing dependent's memory valid (see the type's discussion).
    func retainIfAlive() -> Op? {
        guard swift_tryRetain(reference.toOpaque()) != nil else { return nil }
        return reference.takeRetainedValue()
    }
}
