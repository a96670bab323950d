import Operations

/// Five downloads through a ``SimulatedTransport``, two at a time, with ``DownloadOperation``:
/// two succeed, one is cancelled part-way, one times out on a stalled connection and one fails
/// when the connection drops.
enum DownloaderExample {
    static let example = Example(
        name: "downloader",
        title: "A callback-driven download operation: cancellation, timeout, failure",
        source: "SDWebImage / AFNetworking style operation",
        expected: [
            "5 downloads, at most 2 at a time",
            "a.png: 4096 bytes, checksum 5bfa8dc5",
            "b.png: cancelled after 2048 of 16384 bytes",
            "c.png: timed out after 0.1 seconds",
            "d.png: failed: connection reset by peer after 1024 of 4096 bytes",
            "e.png: 2500 bytes, checksum 18ea5845",
            "never more than 2 transfers in flight",
        ],
        runAsync: { output in
            let transport = SimulatedTransport(resources: [
                "a.png": .serve(size: 4096),
                "b.png": .serve(size: 16384),
                "c.png": .stall(size: 8192, afterChunks: 1),
                "d.png": .reset(size: 4096, afterChunks: 1),
                "e.png": .serve(size: 2500),
            ])
            let downloads = OpQueue()
            downloads.name = "downloads"
            downloads.maxConcurrentOperationCount = 2

            let operations = ["a.png", "b.png", "c.png", "d.png", "e.png"].map { name in
                switch name {
                case "b.png":
                    // Cancelled part-way, as when the image view that wanted it goes off screen. The
                    // progress handler cancels it, so the point is the same on every run.
                    DownloadOperation(resourceName: name, transport: transport) { download, received, _ in
                        if received >= 2048 { download.cancel() }
                    }
                case "c.png":
                    // The transport stalls after the first chunk; without a timeout the operation
                    // would hold its slot for good.
                    DownloadOperation(resourceName: name, transport: transport, timeout: .milliseconds(100))
                default:
                    DownloadOperation(resourceName: name, transport: transport)
                }
            }
            output.line("\(operations.count) downloads, at most \(downloads.maxConcurrentOperationCount) at a time")
            await downloads.addOperations(operations, waitUntilFinished: true)

            for download in operations {
                output.line("\(download.resourceName): \(summary(of: download))")
            }
            // Each operation holds its slot until its transfer is over, so the width bounds the transfers.
            if transport.peakTasksInFlight <= downloads.maxConcurrentOperationCount {
                output.line("never more than \(downloads.maxConcurrentOperationCount) transfers in flight")
            } else {
                output.line("\(transport.peakTasksInFlight) transfers were in flight at once")
            }
        }
    )

    /// What became of `download`, once it finished.
    private static func summary(of download: DownloadOperation) -> String {
        let progress = "\(download.data.count) of \(download.expectedLength) bytes"
        if let timeout = download.error as? OpTimeoutError {
            return "timed out after \(timeout.timeout)"
        }
        if download.isCancelled {
            return "cancelled after \(progress)"
        }
        if let error = download.error {
            return "failed: \(error) after \(progress)"
        }
        return "\(download.data.count) bytes, checksum \(hex(fnv1a(download.data)))"
    }

    /// The 32-bit FNV-1a hash of `bytes`.
    private static func fnv1a(_ bytes: [UInt8]) -> UInt32 {
        bytes.reduce(2_166_136_261 as UInt32) { ($0 ^ UInt32($1)) &* 16_777_619 }
    }

    /// `value` as eight lowercase hexadecimal digits.
    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
