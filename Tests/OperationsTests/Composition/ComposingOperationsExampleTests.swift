import Testing
@testable import Operations

/// The worked example of the "Composing operations" article, with a fake session, so that the
/// article's code compiles and does what the article says.
@Suite struct ComposingOperationsExampleTests {
    struct SignInFailed: Error {}

    actor Session {
        let signsIn: Bool
        private(set) var networkUsers = 0
        private(set) var peakNetworkUsers = 0
        init(signsIn: Bool) { self.signsIn = signsIn }
        func signIn() async throws -> Bool { signsIn }
        func fetchFeed() async throws -> [String] {
            networkUsers += 1
            peakNetworkUsers = max(peakNetworkUsers, networkUsers)
            try await Task.sleep(for: .milliseconds(2))
            networkUsers -= 1
            return ["first post", "second post"]
        }
    }

    /// Builds the article's graph for `session` and returns the group and the fetch.
    func refresh(with session: Session, log: EventLog<String>) -> (GroupOp, AsyncBlockOp<[String]>) {
        let signIn = AsyncOp {
            guard try await session.signIn() else { throw SignInFailed() }
        }
        signIn.name = "sign in"

        let fetchFeed = AsyncBlockOp { try await session.fetchFeed() }
        fetchFeed.name = "fetch feed"
        fetchFeed.addDependency(signIn)
        fetchFeed.addCondition(.noFailedDependencies)
        fetchFeed.addCondition(.mutuallyExclusive("network-\(ObjectIdentifier(session).hashValue)"))

        let refresh = GroupOp(operations: [signIn, fetchFeed])
        refresh.name = "refresh"
        refresh.addObserver(BlockObserver(
            didFinish: { _, error in log.append(error.map { "\($0)" } ?? "ok") }
        ))
        return (refresh, fetchFeed)
    }

    @Test func theRefreshFetchesTheFeedAfterSigningIn() async throws {
        let log = EventLog<String>()
        let (group, fetch) = refresh(with: Session(signsIn: true), log: log)
        OpQueue().addOperation(group)
        await group.waitUntilFinished()
        #expect(try await fetch.value == ["first post", "second post"])
        #expect(group.progress.completedUnitCount == 2 && group.progress.fractionCompleted == 1)
        #expect(log.all == ["ok"])
    }

    @Test func aFailedSignInKeepsTheFetchFromRunningAndFailsTheGroup() async {
        let log = EventLog<String>()
        let (group, fetch) = refresh(with: Session(signsIn: false), log: log)
        OpQueue().addOperation(group)
        await group.waitUntilFinished()
        let failure = fetch.error as? ConditionFailedError
        #expect(failure?.condition == "noFailedDependencies")
        #expect(failure?.underlyingError is SignInFailed)
        let errors = (group.error as? GroupError)?.errors ?? []
        #expect(errors.count == 2 && errors.first is SignInFailed && errors.last is ConditionFailedError)
        #expect(log.count == 1 && log.all.first != "ok")
    }

    @Test func refreshesOfOneSessionNeverFetchAtTheSameTime() async {
        let session = Session(signsIn: true)
        let log = EventLog<String>()
        let queues = (0..<3).map { _ in OpQueue() }
        var groups: [GroupOp] = []
        for index in 0..<6 {
            let (group, _) = refresh(with: session, log: log)
            queues[index % 3].addOperation(group)
            groups.append(group)
        }
        for group in groups { await group.waitUntilFinished() }
        #expect(await session.peakNetworkUsers == 1)
        #expect(log.all == Array(repeating: "ok", count: 6))
    }
}
