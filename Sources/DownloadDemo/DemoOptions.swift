/// The demo's command-line options.
///
/// ```
/// download-demo                  run the demo
/// download-demo --files 6        run it with the first 6 files of the catalog only
/// download-demo --graph          print the graph of operations as Graphviz DOT, and run nothing
/// download-demo --trace FILE     run it, and write a Chrome trace of every operation to FILE
/// download-demo --help           print the usage
/// ```
///
/// To add an option, add a property, a line to ``usage`` and a `case` to ``init(arguments:)``;
/// an option that takes a value reads it with `value(of:from:)`.
struct DemoOptions: Equatable {
    /// How many files of the catalog the demo serves and downloads, from the first (`--files N`;
    /// all of them by default).
    var fileCount = DemoFiles.catalogCount
    /// Print the graph of operations, in Graphviz's DOT language, on standard output instead of
    /// running it (`--graph`).
    var printsGraph = false
    /// Record the run with an `OpTrace`, write its Chrome trace JSON to this file and print its
    /// summary (`--trace FILE`).
    var traceFile: String?
    /// Print ``usage`` and exit (`--help`, `-h`).
    var showsHelp = false

    /// The text printed by `--help`.
    static let usage = """
        usage: download-demo [--files N] [--graph] [--trace FILE] [--help]

        Downloads a manifest, then the \(DemoFiles.catalogCount) files it lists, four at a time, and processes
        each file as soon as it has arrived, all with operations; prints a log and a
        summary.

        options:
          --files N   serve and download only the first N files of the catalog
                      (1 to \(DemoFiles.catalogCount)); with --graph, a smaller picture
          --graph     print the graph of operations (as built, before anything runs) in
                      Graphviz's DOT language on standard output, and exit without running it:
                        swift run download-demo --graph | dot -Tpng -o graph.png
          --trace FILE
                      record the run, write a Chrome trace of every operation to FILE
                      (open it in https://ui.perfetto.dev or chrome://tracing), and print
                      the trace's summary: critical path, waiting, longest operations
          -h, --help  print this help
        """

    /// The options with their default values: the demo runs, with every file.
    init() {}

    /// Parses `arguments`, the command line without the program's name.
    ///
    /// - Throws: ``UsageError`` for an argument that is not an option of the demo, or an option
    ///   without its value or with a wrong one.
    init(arguments: some Sequence<String>) throws(UsageError) {
        var arguments = Array(arguments)[...]
        while let argument = arguments.popFirst() {
            switch argument {
            case "--files":
                let value = try DemoOptions.value(of: argument, from: &arguments)
                guard let count = Int(value), (1...DemoFiles.catalogCount).contains(count) else {
                    throw .invalidValue(option: argument, value: value, expected: "a number of files from 1 to \(DemoFiles.catalogCount)")
                }
                fileCount = count
            case "--graph":
                printsGraph = true
            case "--trace":
                traceFile = try DemoOptions.value(of: argument, from: &arguments)
            case "-h", "--help":
                showsHelp = true
            default:
                throw argument.hasPrefix("-") ? .unknownOption(argument) : .unexpectedArgument(argument)
            }
        }
    }

    /// Takes the value that follows `option` from `arguments`.
    ///
    /// - Throws: ``UsageError/missingValue(option:)`` if `option` is the last argument.
    private static func value(of option: String, from arguments: inout ArraySlice<String>) throws(UsageError) -> String {
        guard let value = arguments.popFirst() else { throw .missingValue(option: option) }
        return value
    }
}
