#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The few file system calls the demo needs, on top of the C library.
enum FileIO {
    /// Creates a new, empty directory with a unique name in `$TMPDIR` (or `/tmp`).
    ///
    /// - Returns: The directory's path.
    static func makeTemporaryDirectory(prefix: String) throws(FileIOError) -> String {
        var base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        let template = "\(base)/\(prefix).XXXXXX"
        var buffer = Array(template.utf8CString)
        let path = buffer.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let result = mkdtemp(buffer.baseAddress!) else { return nil }
            return String(cString: result)
        }
        guard let path else { throw FileIOError(operation: "mkdtemp", path: template, code: errno) }
        return path
    }

    /// Writes `bytes` to a new file at `path`, replacing any file there.
    static func write(_ bytes: [UInt8], to path: String) throws(FileIOError) {
        guard let file = fopen(path, "wb") else { throw FileIOError(operation: "fopen", path: path, code: errno) }
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        let closed = fclose(file)
        guard written == bytes.count, closed == 0 else { throw FileIOError(operation: "fwrite", path: path, code: errno) }
    }

    /// Reads the file at `path` in chunks of `chunkSize` bytes, asking `shouldContinue` before each
    /// chunk whether to go on.
    ///
    /// - Parameters:
    ///   - shouldContinue: Called with the number of bytes read so far; return `false` to stop.
    /// - Returns: The bytes read, and whether they are the whole file.
    static func read(
        _ path: String,
        chunkSize: Int = 64 * 1024,
        shouldContinue: (_ bytesSoFar: Int) -> Bool = { _ in true }
    ) throws(FileIOError) -> (bytes: [UInt8], isComplete: Bool) {
        guard let file = fopen(path, "rb") else { throw FileIOError(operation: "fopen", path: path, code: errno) }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        while true {
            guard shouldContinue(bytes.count) else { return (bytes, false) }
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, chunkSize, file) }
            bytes.append(contentsOf: chunk[..<count])
            if count < chunkSize {
                guard ferror(file) == 0 else { throw FileIOError(operation: "fread", path: path, code: errno) }
                return (bytes, true)
            }
        }
    }

    /// Deletes the file at `path`.
    static func removeFile(_ path: String) throws(FileIOError) {
        guard unlink(path) == 0 else { throw FileIOError(operation: "unlink", path: path, code: errno) }
    }

    /// Deletes the empty directory at `path`.
    static func removeDirectory(_ path: String) throws(FileIOError) {
        guard rmdir(path) == 0 else { throw FileIOError(operation: "rmdir", path: path, code: errno) }
    }
}
