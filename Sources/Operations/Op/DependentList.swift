/// The dependents an operation holds back, as it lists them (see ``DependentLink``), in the
/// order they were added.
///
/// Removing one is cheap however many there are: a dependent that is deinitialized before its
/// dependency finishes removes itself, so a large fan-out released or cancelled as a whole
/// removes them all. A short list is searched; from ``indexThreshold`` links on, a set of the
/// serial numbers of the listed dependents answers instead, a removed link stays in the list,
/// skipped, and the list is compacted once most of it is removed.
struct DependentList {
    private var links = SmallList<DependentLink>()
    /// The serial numbers of the dependents still listed, once the list is long.
    private var listed: Set<UInt64>?

    /// From this many links on, removal goes through ``listed``.
    static let indexThreshold = NarrowedCounters.dependentListIndexThreshold

    init() {}

    /// How many dependents are listed.
    var count: Int { listed?.count ?? links.count }

    var isEmpty: Bool { count == 0 }

    /// The serial numbers of the listed dependents, in order.
    var serials: [UInt64] {
        links.compactMap { link in isListed(link) ? link.serial : nil }
    }

    /// Whether `operation` is listed (compared by identity, without touching it).
    func contains(_ operation: Op) -> Bool {
        links.contains { isListed($0) && $0.links(operation) }
    }

    mutating func append(_ link: DependentLink) {
        links.append(link)
        if listed != nil {
            listed!.insert(link.serial)
        } else if links.count >= Self.indexThreshold {
            listed = Set(links.lazy.map(\.serial))
        }
    }

    /// Removes the dependent whose serial number is `serial`; returns whether it was listed.
    mutating func remove(serial: UInt64) -> Bool {
        guard listed != nil else {
            return links.removeFirst { $0.serial == serial } != nil
        }
        guard listed!.remove(serial) != nil else { return false }
        if links.count > 2 * listed!.count + Self.indexThreshold {
            compact()
        }
        return true
    }

    /// Empties the list, calling `body` with each listed dependent, retained (`nil` if its
    /// deinitialization has begun), and its serial number, in order. Call with the lock of the
    /// operation whose list this is held (see ``DependentLink/retainIfAlive()``): a removed
    /// link is never touched, its dependent may be gone.
    mutating func removeAll(_ body: (Op?, UInt64) -> Void) {
        let taken = links
        let listedSerials = listed
        self = DependentList()
        for link in taken where listedSerials?.contains(link.serial) ?? true {
            body(link.retainIfAlive(), link.serial)
        }
    }

    private func isListed(_ link: DependentLink) -> Bool {
        listed?.contains(link.serial) ?? true
    }

    private mutating func compact() {
        var kept = SmallList<DependentLink>()
        for link in links where isListed(link) {
            kept.append(link)
        }
        links = kept
        if links.count < Self.indexThreshold {
            listed = nil
        }
    }
}
