import Testing
@testable import Operations

/// How a dependency lists its dependents: unretained, and cleared by whichever side goes first.
@Suite struct DependentLinkTests {
    /// An operation that runs a closure as it is deinitialized.
    private final class Probe: Op, @unchecked Sendable {
        // @unchecked Sendable: `onDeinit` is set once, before the probe is shared.
        var onDeinit: (@Sendable (Op) -> Void)?
        deinit { onDeinit?(self) }
    }

    @Test func aLinkRetainsALiveDependent() {
        let dependent = BlockOp {}
        let link = DependentLink(dependent)
        #expect(link.serial == dependent.serial)
        #expect(link.links(dependent) && !link.links(BlockOp {}))
        let retained = link.retainIfAlive()
        #expect(retained === dependent)
    }

    @Test func aLinkRefusesADependentWhoseDeinitializationBegan() {
        let refused = LockedBox<Bool?>(nil)
        do {
            let probe = Probe()
            probe.onDeinit = { operation in
                refused.withLockedValue { $0 = DependentLink(operation).retainIfAlive() == nil }
            }
        }
        #expect(refused.withLockedValue { $0 } == true)
    }

    @Test func aDependentThatGoesFirstLeavesItsDependencysList() {
        let dependency = BlockOp {}
        let other = BlockOp {}
        other.addDependency(dependency)
        do {
            let dropped = BlockOp {}
            dropped.addDependency(dependency)
            #expect(dependency.withState { $0.dependents.count } == 2)
        }
        #expect(dependency.withState { $0.dependents.count } == 1)
        #expect(dependency.withState { $0.dependents.contains(other) })
        dependency.start()
        #expect(other.isReady)
    }

    @Test func aDependentOfAFinishedDependencyDetachesFromNothing() {
        // The dependency took its list as it finished: the dependent's deinitialization finds
        // nothing to remove and takes no lock of it.
        let dependency = BlockOp {}
        do {
            let dependent = BlockOp {}
            dependent.addDependency(dependency)
            dependency.start()
            #expect(dependent.isReady)
            #expect(dependent.withState { $0.unfinishedDependencies.isEmpty })
        }
        #expect(dependency.withState { $0.dependents.isEmpty })
    }
}
