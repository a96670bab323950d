import Operations

// STUB: to be replaced by the real example.
enum DownloaderExample {
    static let example = Example(
        name: "downloader",
        title: "(stub)",
        source: "SDWebImage / AFNetworking style",
        expected: ["stub"]
    ) { output in
        output.line("stub")
    }
}
