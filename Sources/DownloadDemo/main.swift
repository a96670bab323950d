// download-demo: the scenario of Apple's concurrency guide, with swift-operations.
//
// Download a manifest first, then download the files it lists, four at a time, and process each
// file as soon as it has arrived, all with operations:
//
//   ManifestDownload (AsyncOp) ──▶ 40 × FileDownload (Op) ──▶ 40 × InvocationOp(Processor.process)
//      download queue, width 4      download queue, width 4      processing queue, default width
//                                                                          │
//                                                  summary (BlockOp) ◀─────┘ depends on all 40
//
// Nothing touches the network: the "server" is a temporary directory, and a download is a file
// read slowed down to a few milliseconds per 4 KB.
//
// `download-demo --trace FILE` records the run with an OpTrace and writes it as a Chrome trace.
// `download-demo --graph` builds the same operations but prints their graph as Graphviz DOT
// instead of running them; `--files N` serves only the first N files of the catalog (a smaller
// graph to look at); `download-demo --help` lists the options (see DemoOptions).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Operations

/// Files larger than this are not downloaded.
let sizeLimit = 40 * 1024

let options: DemoOptions
do {
    options = try DemoOptions(arguments: CommandLine.arguments.dropFirst())
} catch {
    Console.writeError("download-demo: \(error)\nTry 'download-demo --help' for the options.")
    exit(2)
}
if options.showsHelp {
    Console.write(DemoOptions.usage)
    exit(0)
}

let files: DemoFiles
if options.printsGraph {
    // Standard output carries the graph alone: no log, and no files, since nothing will read them.
    files = DemoFiles.unwritten(count: options.fileCount)
} else {
    Console.log("swift-operations download demo")
    do {
        files = try DemoFiles.create(count: options.fileCount)
    } catch {
        Console.log("could not create the demo files: \(error)")
        exit(1)
    }
    Console.log("server: \(files.names.count) files and a manifest in \(files.directory)")
}

// MARK: Queues

let downloadQueue = OpQueue()
downloadQueue.name = "downloads"
downloadQueue.maxConcurrentOperationCount = 4

let processingQueue = OpQueue()
processingQueue.name = "processing"  // default width: as many as are ready

// MARK: Operations

let tracker = DownloadTracker()
let downloads = files.names.map { FileDownload(fileName: $0, from: files, tracker: tracker) }
for download in downloads {
    // Runs on a worker thread once the download has finished, whether it ran or was cancelled.
    // (The queue clears the completion block when it runs, so capturing `download` is no cycle.)
    download.completionBlock = { Console.log(download.outcome) }
}

// The manifest's callback plans the downloads before the manifest op finishes: every download
// depends on it, so none has started yet, and new priorities and cancellations take effect first.
let manifestDownload = ManifestDownload(path: files.manifestPath, latency: .milliseconds(40)) { manifest in
    // The downloads become ready one by one, in catalog order, when the manifest op finishes.
    // Hold the queue meanwhile, so that it cannot start an early, ordinary download before the
    // urgent ones later in the list are ready too; the manifest's completion block resumes it.
    downloadQueue.isSuspended = true
    for download in downloads {
        guard let entry = manifest.entry(named: download.fileName) else { continue }
        if entry.size > sizeLimit {
            Console.log("plan: cancel \(download.fileName), \(Format.kilobytes(entry.size)) is over the \(Format.kilobytes(sizeLimit)) limit")
            download.cancel(because: "\(Format.kilobytes(entry.size)) is over the \(Format.kilobytes(sizeLimit)) limit")
        } else if entry.priority != .normal {
            download.queuePriority = entry.priority
        }
    }
    let urgent = downloads.filter { $0.queuePriority > .normal }.map(\.fileName)
    let last = downloads.contains { $0.queuePriority < .normal } ? "; appendices .low" : ""  // not with --files 32 or fewer
    Console.log("plan: priorities from the manifest; first: \(urgent.joined(separator: ", "))\(last)")
}
manifestDownload.completionBlock = {
    Console.log("manifest: completion block; resuming the download queue")
    downloadQueue.isSuspended = false
}
for download in downloads {
    download.addDependency(manifestDownload)
}

let processor = Processor()
let processing = downloads.map { download in
    // An InvocationOp calls a method of an existing object, like NSInvocationOperation.
    let operation = InvocationOp(target: processor, invoking: Processor.process, with: download)
    operation.name = "process \(download.fileName)"
    operation.addDependency(download)  // across queues
    return operation
}

let summary = BlockOp {
    let report = Summary(processing: processing, tracker: tracker, processor: processor, downloadLimit: 4)
    Console.write(report.lines.joined(separator: "\n"))
}
summary.name = "summary"
for operation in processing {
    summary.addDependency(operation)
}

// MARK: Observation

let manifestObservation = manifestDownload.observe(\.isFinished, options: [.new]) { operation, change in
    Console.log("observer: \(operation.name ?? "?") op isFinished → \(change.newValue!)")
}

// Every processing op and the summary op add one unit to the queue's progress when they finish.
processingQueue.progress.totalUnitCount = Int64(processing.count + 1)
let progressReporter = ProgressReporter(label: "processing queue")
let progressObservation = processingQueue.observe(\.operationCount) { queue, _ in
    progressReporter.update(queue.progress)
}

// MARK: Run

if options.printsGraph {
    // Queued on held queues, the operations show their queues in the graph, and none starts.
    downloadQueue.isSuspended = true
    processingQueue.isSuspended = true
}
// Recording from before the first operation is added: the trace sees every enqueue.
let recording = options.traceFile != nil && !options.printsGraph ? OpTrace.startRecording() : nil
downloadQueue.addOperation(manifestDownload)
downloadQueue.addOperations(downloads, waitUntilFinished: false)
downloadQueue.addBarrierBlock {
    Console.log("barrier: every download has finished or was cancelled; peak \(tracker.peak) at once")
}
processingQueue.addOperations(processing + [summary], waitUntilFinished: false)
if options.printsGraph {
    // The operations built above, in that order; not the barrier, which waits for the whole
    // queue rather than for dependencies, and would be a lone node without a name.
    print(OpGraph([manifestDownload] + downloads + processing + [summary]).dot, terminator: "")
    exit(0)
}
Console.log("queued: 1 manifest + \(downloads.count) downloads (width 4), \(processing.count) processing ops + summary")

// The user cancels the biggest ordinary download while it runs: the op sees `isCancelled`
// between chunks and stops early; its processing op still runs and sees the cancellation.
manifestDownload.waitUntilFinished()
guard let manifest = manifestDownload.manifest else {
    Console.log("the manifest could not be loaded: \(manifestDownload.failure.map { "\($0)" } ?? "cancelled")")
    processingQueue.waitUntilAllOperationsAreFinished()
    _ = try? files.remove()
    exit(1)
}
let victim = downloads
    .filter { !$0.isCancelled && $0.queuePriority == .normal }
    .max { (manifest.entry(named: $0.fileName)?.size ?? 0) < (manifest.entry(named: $1.fileName)?.size ?? 0) }
if let victim {
    let victimStarted = DispatchSemaphore(value: 0)
    let victimObservation = victim.observe(\.isExecuting, options: [.initial, .new]) { _, change in
        if change.newValue == true { victimStarted.signal() }
    }
    if victim.isFinished || victimStarted.wait(timeout: .now() + .seconds(5)) == .timedOut {
        Console.log("user: \(victim.fileName) finished before it could be cancelled")
    } else {
        usleep(15_000)
        Console.log("user: cancel \(victim.fileName) while it is downloading")
        victim.cancel(because: "cancelled by the user")
    }
    victimObservation.invalidate()
} else {
    Console.log("user: no ordinary download to cancel")  // with --files 2 or fewer
}

processingQueue.waitUntilAllOperationsAreFinished()
downloadQueue.waitUntilAllOperationsAreFinished()
manifestObservation.invalidate()
progressObservation.invalidate()

if let recording, let traceFile = options.traceFile {
    let trace = recording.stop()
    do {
        try FileIO.write(Array(trace.chromeTraceJSON.utf8), to: traceFile)
        Console.log("trace: \(trace.operations.count) operations written to \(traceFile) (open it in https://ui.perfetto.dev)")
        Console.write(trace.summary)
    } catch {
        Console.log("trace: could not write \(traceFile): \(error)")
        exit(1)
    }
}

do {
    let removed = try files.remove()
    Console.log("cleanup: removed \(removed) files and \(files.directory)")
} catch {
    Console.log("cleanup failed: \(error)")
    exit(1)
}
// The same checks as the summary's: nothing failed, and never more than 4 downloads at once.
let succeeded = Summary(processing: processing, tracker: tracker, processor: processor, downloadLimit: 4).isSuccessful
exit(succeeded ? 0 : 1)
