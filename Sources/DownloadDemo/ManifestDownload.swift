import Dispatch
import Operations
import Synchronization

/// Downloads and parses the manifest: an ``AsyncOp`` whose work finishes on a Dispatch callback,
/// on another thread, after ``execute()`` has long returned.
///
/// The operation stays executing (and keeps its slot in the queue) until the callback calls
/// ``AsyncOp/finish()``. Just before finishing, it hands the manifest to `onLoad`: the downloads
/// depend on this operation, so they are all still waiting and can be re-prioritised or cancelled
/// there.
final class ManifestDownload: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable (restated from Op, which a subclass must do): the properties added here
    // are constants of Sendable types, and the mutable state, `onLoad` and `outcome`, is in
    // `Mutex`es.

    /// The manifest file.
    let path: String
    /// How long the "server" takes to answer.
    let latency: DispatchTimeInterval

    /// Taken (and so released) when called: it refers to the downloads, which refer to this op.
    private let onLoad: Mutex<(@Sendable (Manifest) -> Void)?>
    private let outcome = Mutex<Result<Manifest, ManifestError>?>(nil)

    /// Creates the operation.
    ///
    /// - Parameters:
    ///   - path: The manifest file.
    ///   - latency: How long the simulated server takes to answer.
    ///   - onLoad: Called with the manifest on the callback's thread, before the operation
    ///     finishes and its dependents start.
    init(path: String, latency: DispatchTimeInterval, onLoad: @escaping @Sendable (Manifest) -> Void) {
        self.path = path
        self.latency = latency
        self.onLoad = Mutex(onLoad)
        super.init()
        name = "manifest"
    }

    /// The parsed manifest, once the operation has finished without error.
    var manifest: Manifest? {
        outcome.withLock { outcome in try? outcome?.get() }
    }

    /// Why the manifest could not be loaded, if it could not.
    var failure: ManifestError? {
        outcome.withLock { outcome in
            guard case .failure(let error)? = outcome else { return nil }
            return error
        }
    }

    /// Sends the "request" and returns at once; the answer arrives on a Dispatch callback.
    override func execute() {
        Console.log("manifest: request sent; execute() returns, the op stays executing until the callback calls finish()")
        DispatchQueue.global().asyncAfter(deadline: .now() + latency) { [self] in
            // Whatever happens below, finish() is called exactly once.
            defer { finish() }
            let onLoad = self.onLoad.withLock { onLoad in onLoad.take() }
            guard !isCancelled else { return }
            let result: Result<Manifest, ManifestError>
            do throws(FileIOError) {
                let (bytes, _) = try FileIO.read(path)
                result = Result { () throws(ManifestError) in try Manifest(parsing: String(decoding: bytes, as: UTF8.self)) }
            } catch {
                result = .failure(.unreadable(error))
            }
            outcome.withLock { $0 = result }
            if case .success(let manifest) = result {
                Console.log("manifest: \(manifest.entries.count) entries received on a Dispatch thread")
                onLoad?(manifest)
            }
        }
    }
}
