import Testing
@testable import Operations

@Suite struct OpGraphTests {
    private struct Failure: Error {}

    @Test func collectsDependenciesTransitivelyWithEdgesFromDependencyToDependent() {
        let fetch = BlockOp {}
        fetch.name = "fetch"
        let parse = BlockOp {}
        parse.name = "parse"
        let store = BlockOp {}
        store.name = "store"
        parse.addDependency(fetch)
        store.addDependency(parse)

        let graph = OpGraph([store])
        #expect(graph.nodes.map(\.label) == [store, parse, fetch].map(\.description))
        let id = { (op: Op) in graph.nodes.first { $0.label == op.description }!.id }
        #expect(Set(graph.edges) == [
            OpGraph.Edge(dependency: id(fetch), dependent: id(parse)),
            OpGraph.Edge(dependency: id(parse), dependent: id(store)),
        ])
        #expect(graph.dot.contains("n\(id(fetch)) -> n\(id(parse));"))
        #expect(graph.dot.contains("n\(id(parse)) -> n\(id(store));"))
        #expect(graph.mermaid.contains("n\(id(fetch)) --> n\(id(parse))"))
        #expect(graph.nodes.allSatisfy { !$0.isOnCycle && !$0.hasFailed && !$0.isFinished })
        #expect(graph.nodes.first { $0.id == id(fetch) }?.state == "ready")
        #expect(graph.nodes.first { $0.id == id(store) }?.state == "pending")
    }

    @Test func nodesShowTypeStatePriorityAndQueue() {
        let queue = OpQueue()
        queue.name = "downloads"
        queue.isSuspended = true
        let download = BlockOp {}
        download.name = "download"
        download.queuePriority = .high
        queue.addOperation(download)
        let node = OpGraph(queue).nodes.first!
        #expect(node.type == "BlockOp")
        #expect(node.queue == "downloads")
        #expect(node.priority == .high)
        let dot = OpGraph(queue).dot
        // The type once: the description names it, the next line does not repeat it.
        #expect(dot.contains("\\nready · high\\n"))
        #expect(!dot.contains("BlockOp · ready"))
        #expect(dot.contains("queue: downloads"))
        queue.cancelAllOperations()
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
    }

    @Test func aQueueGraphDrawsItsCurrentMembers() {
        let queue = OpQueue()
        queue.isSuspended = true
        let a = BlockOp {}, b = BlockOp {}
        b.addDependency(a)
        queue.addOperations([a, b], waitUntilFinished: false)
        let graph = OpGraph(queue)
        #expect(graph.nodes.count == 2)
        #expect(graph.edges.count == 1)
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(OpGraph(queue).nodes.isEmpty)
    }

    @Test func groupsAreDrawnAsClustersOfTheirChildren() {
        let first = BlockOp {}, second = BlockOp {}
        second.addDependency(first)
        let inner = GroupOp(operations: [BlockOp {}])
        let group = GroupOp(operations: [first, second, inner])
        group.name = "refresh"
        let graph = OpGraph([group])
        #expect(graph.nodes.count == 5)
        let groupID = graph.nodes.first { $0.isGroup && $0.label == group.description }!.id
        #expect(graph.nodes.filter { $0.group == groupID }.count == 3)
        let dot = graph.dot
        #expect(dot.contains("subgraph cluster_\(groupID) {"))
        #expect(dot.components(separatedBy: "subgraph cluster_").count - 1 == 2)
        #expect(graph.mermaid.contains("subgraph g\(groupID)"))
    }

    @Test func operationsOnACycleAndFailedOnesAreRedAndFinishedOnesGrey() {
        let a = BlockOp {}, b = BlockOp {}
        a.name = "a"
        b.name = "b"
        a.addDependency(b)
        b.addDependency(a)
        let failed = ResultOp<Int> { throw Failure() }
        failed.name = "failed"
        failed.start()
        let done = BlockOp {}
        done.name = "done"
        done.start()

        let graph = OpGraph([a, failed, done])
        let node = { (name: String) in graph.nodes.first { $0.label.contains("\"\(name)\"") }! }
        #expect(node("a").isOnCycle && node("b").isOnCycle)
        #expect(node("failed").hasFailed && !node("failed").isOnCycle)
        #expect(node("done").isFinished && !node("done").hasFailed)
        let dot = graph.dot
        #expect(dot.contains("n\(node("a").id) -> n\(node("b").id) [color=red];"))
        #expect(dot.contains("on a dependency cycle"))
        #expect(dot.contains("fillcolor=\"#eeeeee\""))
        #expect(graph.mermaid.contains("style n\(node("failed").id) stroke:#d00"))
        a.cancel()   // ends the cycle's hold (nothing waits for it)
        b.cancel()
    }

    @Test func labelsAreEscaped() {
        let op = BlockOp {}
        op.name = "say \"hi\" \\ bye"
        let graph = OpGraph([op])
        #expect(graph.dot.contains(#"say \"hi\" \\ bye"#))
        #expect(graph.mermaid.contains("say #quot;hi#quot;"))
    }
}
