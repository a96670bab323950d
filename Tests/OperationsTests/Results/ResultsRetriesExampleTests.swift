import Testing
@testable import Operations

/// The worked example of the "Results, retries and timeouts" article, with a fake client, so that
/// the article's code compiles and does what the article says.
@Suite struct ResultsRetriesExampleTests {
    struct TransientError: Error {}
    struct ParseError: Error {}

    struct Feed: Equatable {
        let title: String
        init(parsing data: [UInt8]) throws {
            guard !data.isEmpty else { throw ParseError() }
            title = String(decoding: data, as: UTF8.self)
        }
    }

    /// Answers each download as scripted: fails, hangs (until cancelled), or returns bytes.
    actor Client {
        enum Answer { case fail, hang, bytes([UInt8]) }
        private var script: [Answer]
        private(set) var downloads = 0
        init(_ script: [Answer]) { self.script = script }
        func download(_ url: String) async throws -> [UInt8] {
            downloads += 1
            let answer = script.isEmpty ? .fail : script.removeFirst()
            switch answer {
            case .fail: throw TransientError()
            case .hang:
                try await Task.sleep(for: .seconds(60))
                throw TransientError()
            case .bytes(let bytes): return bytes
            }
        }
    }

    final class Database: Sendable {
        let saved = EventLog<Feed>()
        func save(_ feed: Feed) { saved.append(feed) }
    }

    final class StoreFeed: Op, @unchecked Sendable {
        // @unchecked Sendable: `feed` is written by the injection, before `main()` starts, and
        // read only by `main()`; the queue orders the two.
        var feed: Feed?
        let database: Database
        init(database: Database) {
            self.database = database
            super.init()
        }
        override func main() {
            guard let feed else { return }
            database.save(feed)
        }
    }

    /// The article's graph, with shorter waits. The timeouts are generous: an attempt's task may
    /// wait for a thread of the cooperative pool while other tests hold them.
    func pipeline(client: Client, database: Database,
                  timeout: @escaping @Sendable (_ attempt: Int) -> Duration = { _ in .seconds(30) }) -> (TypedRetryOp<[UInt8]>, ResultOp<Feed>, StoreFeed) {
        let feedURL = "https://example.com/feed"
        let fetch = TypedRetryOp(
            maxAttempts: 4,
            backoff: .exponential(initial: .milliseconds(10), multiplier: 2, maximum: .milliseconds(40), jitter: true),
            shouldRetry: { error, _ in error is OpTimeoutError || error is TransientError }
        ) { attempt in
            let download = AsyncBlockOp { try await client.download(feedURL) }
            download.timeout = timeout(attempt)
            download.name = "download, attempt \(attempt)"
            return download
        }
        let parse = fetch.map { data in try Feed(parsing: data) }
        let store = StoreFeed(database: database)
        store.inject(from: parse) { store, feed in store.feed = feed }
        return (fetch, parse, store)
    }

    @Test func aFetchThatFailsThenHangsThenSucceedsIsStored() async throws {
        let client = Client([.fail, .hang, .bytes(Array("news".utf8))])
        let database = Database()
        // Only the attempt that hangs is cut short: the one after it must not time out too while
        // its task waits for a cooperative thread in a crowded suite.
        let (fetch, parse, store) = pipeline(client: client, database: database, timeout: { $0 == 2 ? .seconds(3) : .seconds(30) })
        let start = ContinuousClock.now
        await OpQueue().addOperations([fetch, parse, store], waitUntilFinished: true)
        #expect(fetch.attempts.count == 3)
        #expect(fetch.attempts[1].error is OpTimeoutError)
        #expect(fetch.succeededAttempt === fetch.attempts[2])
        #expect(fetch.error == nil)
        #expect(try parse.output?.get() == Feed(parsing: Array("news".utf8)))
        #expect(database.saved.all.map(\.title) == ["news"])
        #expect(try await parse.value == Feed(parsing: Array("news".utf8)))
        #expect(!store.isCancelled)
        // The hanging attempt was cut at its timeout, not after its minute.
        #expect(ContinuousClock.now - start < .seconds(50))
        #expect(await client.downloads == 3)
    }

    @Test func whenEveryAttemptFailsTheStoreIsSkippedWithTheFailure() async {
        let client = Client([.fail, .fail, .fail, .fail])
        let database = Database()
        let (fetch, parse, store) = pipeline(client: client, database: database)
        await OpQueue().addOperations([fetch, parse, store], waitUntilFinished: true)
        #expect(fetch.attempts.count == 4)
        #expect(fetch.error is TransientError)
        #expect(parse.error is TransientError)
        await #expect(throws: TransientError.self) { try await parse.value }
        #expect(store.isCancelled)
        let failure = store.error as? InjectionError
        #expect(failure?.underlyingError is TransientError)
        #expect(failure?.producer == parse.description)
        #expect(database.saved.all.isEmpty)
    }

    @Test func anErrorThatIsNotRetriedEndsTheRetryingAtOnce() async {
        let client = Client([.bytes([])])
        let database = Database()
        let (fetch, parse, store) = pipeline(client: client, database: database)
        await OpQueue().addOperations([fetch, parse, store], waitUntilFinished: true)
        // The download succeeded; parsing failed, which is not retried (it is not an attempt).
        #expect(fetch.attempts.count == 1)
        #expect(parse.error is ParseError)
        #expect((store.error as? InjectionError)?.underlyingError is ParseError)
        #expect(database.saved.all.isEmpty)
    }
}
