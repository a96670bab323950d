import Testing
@testable import Operations

/// The text of a dump, rendered from hand-made values: the documented format, without threads.
@Suite struct QueueDumpFormatTests {
    private typealias Line = QueueDump.Line
    private typealias Related = QueueDump.Related

    private func line(_ state: Line.State, _ name: String, priority: Op.QueuePriority = .normal, barrier: Bool = false,
                      cancelled: Bool = false, _ holds: [QueueDump.Hold] = []) -> Line {
        Line(state: state, operation: "BlockOp \"\(name)\"", priority: priority, isBarrier: barrier,
             isCancelled: cancelled, holds: holds)
    }

    private func related(_ name: String, _ state: String, _ place: String? = nil) -> Related {
        Related(operation: "BlockOp \"\(name)\"", state: state, place: place)
    }

    @Test func headerAndOneLinePerMemberInOrder() {
        let dump = QueueDump(
            queue: "OpQueue \"downloads\"", maxConcurrentOperationCount: 2, isSuspended: false,
            operationCount: 4, runningCount: 2,
            lines: [
                line(.executing, "fetch a.bin"),
                line(.finishing, "fetch b.bin", cancelled: true),
                line(.waiting, "parse a.bin", [.dependencies(count: 1, shown: [related("fetch a.bin", "executing")])]),
                line(.ready, "fetch c.bin", priority: .high, [.slot(running: 2, width: 2)]),
            ],
            omitted: 0)
        #expect(dump.text == """
            OpQueue "downloads" (max concurrent: 2, suspended: no): 4 operations, 2 running
              ▶ executing  BlockOp "fetch a.bin" (priority: normal)
              ✓ finishing  BlockOp "fetch b.bin" (priority: normal, cancelled)
              ⏸ waiting    BlockOp "parse a.bin" (priority: normal) — for dependencies: BlockOp "fetch a.bin" (executing)
              ⏸ ready      BlockOp "fetch c.bin" (priority: high) — for a slot: 2 of 2 running
            """)
    }

    @Test func headerOfAnEmptySuspendedDefaultWidthQueue() {
        let dump = QueueDump(queue: "OpQueue \"idle\"", maxConcurrentOperationCount: -1, isSuspended: true,
                             operationCount: 0, runningCount: 0, lines: [], omitted: 0)
        #expect(dump.text == "OpQueue \"idle\" (max concurrent: default, suspended: yes): 0 operations, 0 running")
        let one = QueueDump(queue: "OpQueue \"one\"", maxConcurrentOperationCount: 0, isSuspended: false,
                            operationCount: 1, runningCount: 0, lines: [], omitted: 1)
        #expect(one.renderedLines == ["OpQueue \"one\" (max concurrent: 0, suspended: no): 1 operation, 0 running",
                                      "  … 1 other operation not shown"])
    }

    @Test func everyHoldHasItsClause() {
        let render = QueueDump.render as (QueueDump.Hold) -> String
        #expect(render(.dependencies(count: 2, shown: [related("a", "waiting", "in OpQueue \"other\""), related("b", "ready", "in no queue")]))
                == "for dependencies: BlockOp \"a\" (waiting, in OpQueue \"other\"), BlockOp \"b\" (ready, in no queue)")
        #expect(render(.dependencies(count: 0, shown: [])) == "for dependencies: none left, becoming ready")
        #expect(render(.conditionsAfterDependencies(["signed in", "noFailedDependencies"]))
                == "then conditions: signed in, noFailedDependencies")
        #expect(render(.evaluatingConditions(["disk space"])) == "evaluating conditions: disk space")
        #expect(render(.exclusivity(category: "database", holders: [related("migrate", "executing", "in OpQueue \"db\"")], earlierRequests: []))
                == "for exclusivity \"database\": held by BlockOp \"migrate\" (executing, in OpQueue \"db\")")
        #expect(render(.exclusivity(category: "database", holders: [], earlierRequests: [related("backup", "ready")]))
                == "for exclusivity \"database\": asked for earlier by BlockOp \"backup\" (ready)")
        #expect(render(.barrier(related("flush", "ready"))) == "behind barrier BlockOp \"flush\" (ready)")
        #expect(render(.earlierOperations(count: 1, shown: [related("a", "executing")]))
                == "for 1 earlier operation to leave: BlockOp \"a\" (executing)")
        #expect(render(.earlierOperations(count: 2, shown: [related("a", "executing"), related("b", "finishing")]))
                == "for 2 earlier operations to leave: BlockOp \"a\" (executing), BlockOp \"b\" (finishing)")
        #expect(render(.children(count: 1, shown: [related("c", "executing", "child of GroupOp \"g\"")]))
                == "for 1 unfinished child: BlockOp \"c\" (executing, child of GroupOp \"g\")")
        #expect(render(.suspended) == "queue is suspended")
        #expect(render(.slot(running: 1, width: 1)) == "for a slot: 1 of 1 running")
        #expect(render(.slot(running: 0, width: 0)) == "for a slot: max concurrent is 0")
        #expect(render(.aboutToStart) == "about to start")
    }

    @Test func longListsNameFiveAndCountTheRest() {
        let shown = (0..<5).map { related("d\($0)", "waiting") }
        let text = QueueDump.render(.dependencies(count: 12, shown: shown))
        #expect(text.hasPrefix("for dependencies: BlockOp \"d0\" (waiting), "))
        #expect(text.hasSuffix("BlockOp \"d4\" (waiting), and 7 more"))
        let children = QueueDump.render(.children(count: 6, shown: (0..<5).map { related("c\($0)", "ready") }))
        #expect(children.hasPrefix("for 6 unfinished children: ") && children.hasSuffix(", and 1 more"))
    }

    @Test func severalHoldsAreSeparatedBySemicolonsAndBarriersAreMarked() {
        let text = QueueDump.render(line(.cancelled, "x", priority: .veryLow, barrier: true,
                                         [.barrier(related("b", "waiting")), .suspended, .slot(running: 3, width: 3)]))
        #expect(text == "  ⏸ cancelled  BlockOp \"x\" (priority: veryLow, barrier) — behind barrier BlockOp \"b\" (waiting); queue is suspended; for a slot: 3 of 3 running")
    }

    @Test func lineBreaksInDescriptionsBecomeSpaces() {
        #expect(QueueDump.oneLine("two\nlines\r\nhere") == "two lines here")
        #expect(QueueDump.oneLine("plain") == "plain")
    }
}
