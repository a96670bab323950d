import Operations

/// Operations on three queues that depend on one another: downloads on a network queue, a parse
/// step on a parsing queue and a display step on a third queue run in the order their
/// dependencies impose, even though the queues receive them in the opposite order.
///
/// The guide's section *Configuring Interoperation Dependencies* points out that dependencies
/// are not limited to the operations of one queue: each operation manages its own dependencies,
/// so one graph can span any number of queues. It also asks that dependencies be configured
/// before the operations are added to a queue or started, which this example does.
enum DependenciesAcrossQueuesExample {
    /// What the steps hand to one another: the downloaded files (with the queue each download ran
    /// on) and the number of parsed records.
    final class Pipeline: Sendable {
        private struct State {
            var downloaded: [String: String] = [:]   // file name → queue name
            var records = 0
        }

        private let state = Locked(State())

        /// Records a finished download of `file`, made on the queue called `queueName`.
        func downloaded(_ file: String, on queueName: String) {
            state.withLock { $0.downloaded[file] = queueName }
        }

        /// The downloaded files, sorted, and the queues they were downloaded on.
        var downloads: (files: [String], queues: Set<String>) {
            state.withLock { state in (state.downloaded.keys.sorted(), Set(state.downloaded.values)) }
        }

        /// The number of parsed records.
        var records: Int {
            get { state.withLock { $0.records } }
            set { state.withLock { $0.records = newValue } }
        }
    }

    /// The name of the queue running the calling operation.
    static var currentQueueName: String {
        OpQueue.current?.name ?? "no queue"
    }

    static let example = Example(
        name: "dependencies-across-queues",
        title: "Dependencies across queues",
        source: "Guide: Configuring Interoperation Dependencies",
        expected: [
            "display added to \"display\", parse added to \"parsing\"; no download added yet",
            "parse is ready: false, display is ready: false",
            "parse on parsing: 3 files downloaded on network (a.json, b.json, c.json)",
            "display on display: showing 3 records",
            "operations left: network 0, parsing 0, display 0",
        ]
    ) { output in
        let network = OpQueue()
        network.name = "network"
        let parsing = OpQueue()
        parsing.name = "parsing"
        parsing.maxConcurrentOperationCount = 1
        let display = OpQueue()
        display.name = "display"
        display.maxConcurrentOperationCount = 1

        let pipeline = Pipeline()
        let files = ["a.json", "b.json", "c.json"]

        // The downloads run side by side on the network queue, in no fixed order, so they print
        // nothing: the parse step reports them once all of them have finished.
        let downloads = files.map { file in
            let download = BlockOp { pipeline.downloaded(file, on: currentQueueName) }
            download.name = "download \(file)"
            return download
        }
        let parse = BlockOp {
            let (names, queues) = pipeline.downloads
            output.line("parse on \(currentQueueName): \(names.count) files downloaded on \(queues.sorted().joined(separator: ", ")) (\(names.joined(separator: ", ")))")
            pipeline.records = names.count
        }
        parse.name = "parse"
        let show = BlockOp {
            output.line("display on \(currentQueueName): showing \(pipeline.records) records")
        }
        show.name = "display"

        // Every dependency is in place before any operation joins a queue.
        for download in downloads {
            parse.addDependency(download)   // fan in: parsing waits for every download
        }
        show.addDependency(parse)

        // The queues get the operations last step first: the dependencies, not the order in which
        // the queues receive their operations, decide what runs when.
        display.addOperation(show)
        parsing.addOperation(parse)
        output.line("display added to \"display\", parse added to \"parsing\"; no download added yet")
        output.line("parse is ready: \(parse.isReady), display is ready: \(show.isReady)")

        network.addOperations(downloads, waitUntilFinished: false)

        // The display step finishing means the whole chain has run. An operation leaves its queue
        // just after it finishes, so wait for each queue to be empty before counting.
        show.waitUntilFinished()
        for queue in [network, parsing, display] {
            queue.waitUntilAllOperationsAreFinished()
        }
        output.line("operations left: network \(network.operationCount), parsing \(parsing.operationCount), display \(display.operationCount)")
    }
}
