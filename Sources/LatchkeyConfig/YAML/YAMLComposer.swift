import CYAML

/// A document that is not well-formed YAML, with libyaml's message and the place it gives.
struct YAMLSyntaxError: Error {
    var message: String
    var mark: YAMLMark?
}

/// Composes libyaml's events into one document's nodes.
///
/// Yams' composer, which this replaces, was half of loading 10,000 routes: an object per
/// event and per tag, and every mapping's keys hashed as whole nodes to find duplicates.
/// Here an event is parsed into one reused record, a scalar's text is copied once, and a
/// mapping's keys are compared as text.
///
/// Besides syntax, two limits keep a hostile file from exhausting the process: nesting
/// deeper than `maxDepth` (each level is a frame of this recursive descent), and aliases
/// that stand for more than `maxAliasedNodes` nodes in all (a "billion laughs" document is
/// a few lines of aliases naming each other, and every reader of the tree walks what they
/// stand for).
final class YAMLComposer {
    static let maxDepth = 512
    static let maxAliasedNodes = 1_000_000

    // libyaml's state behind pointers: a class's stored `var`s are checked for exclusive
    // access at every use, which was a tenth of composing.
    private let parser = UnsafeMutablePointer<yaml_parser_t>.allocate(capacity: 1)
    /// The current event; a zeroed one deletes to nothing.
    private let event = UnsafeMutablePointer<yaml_event_t>.allocate(capacity: 1)
    /// Anchored nodes with the number of nodes each stands for.
    private var anchors: [String: (node: YAMLNode, size: Int)] = [:]
    private var aliasedNodes = 0
    /// The document's bytes, for placing a reader's error.
    private var input = UnsafeBufferPointer<UInt8>(start: nil, count: 0)

    /// The single document of `text`: `YAMLNode.empty` when there is none, an error when
    /// there are more than one.
    static func compose(_ text: String) throws(YAMLSyntaxError) -> YAMLNode {
        var utf8 = text
        return try utf8.withUTF8 { bytes in
            Result { () throws(YAMLSyntaxError) in try YAMLComposer().document(bytes) }
        }.get()
    }

    private init() {
        parser.initialize(to: yaml_parser_t())
        event.initialize(to: yaml_event_t())
    }

    deinit {
        yaml_event_delete(event)
        yaml_parser_delete(parser)
        parser.deallocate()
        event.deallocate()
    }

    private func document(_ bytes: UnsafeBufferPointer<UInt8>) throws(YAMLSyntaxError) -> YAMLNode {
        guard yaml_parser_initialize(parser) == 1 else { throw YAMLSyntaxError(message: "out of memory") }
        yaml_parser_set_encoding(parser, YAML_UTF8_ENCODING)
        input = bytes
        yaml_parser_set_input_string(parser, bytes.baseAddress, bytes.count)
        try next()  // the stream's start
        try next()  // a document's start, or the stream's end
        if event.pointee.type == YAML_STREAM_END_EVENT { return .empty }
        try next()
        let root = try node(depth: 0).node
        try next()  // the document's end
        try next()  // the stream's end, or another document
        guard event.pointee.type == YAML_STREAM_END_EVENT else {
            throw YAMLSyntaxError(message: "more than one document in the file", mark: mark())
        }
        return root
    }

    /// Parses the next event into `event`, releasing the one before.
    private func next() throws(YAMLSyntaxError) {
        yaml_event_delete(event)
        guard yaml_parser_parse(parser, event) == 1 else { throw parserError() }
    }

    /// The node that starts with the current event, and how many nodes it stands for.
    private func node(depth: Int) throws(YAMLSyntaxError) -> (node: YAMLNode, size: Int) {
        let start = mark()
        guard depth < Self.maxDepth else {
            throw YAMLSyntaxError(message: "nested deeper than \(Self.maxDepth) levels", mark: start)
        }
        let composed: (node: YAMLNode, size: Int)
        // Copied out now: the event that holds it is released before a collection ends.
        let anchor: String?
        switch event.pointee.type {
        case YAML_ALIAS_EVENT:
            let name = String(cString: event.pointee.data.alias.anchor)
            guard let anchored = anchors[name] else {
                throw YAMLSyntaxError(message: "the alias *\(Self.safe(name)) names no anchor before it", mark: start)
            }
            aliasedNodes += anchored.size
            guard aliasedNodes <= Self.maxAliasedNodes else {
                throw YAMLSyntaxError(message: "aliases stand for more than \(Self.maxAliasedNodes) nodes in all", mark: start)
            }
            return anchored
        case YAML_SCALAR_EVENT:
            let scalar = event.pointee.data.scalar
            anchor = scalar.anchor.map { String(cString: $0) }
            let text = String(decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
            composed = (YAMLNode(content: .scalar(YAMLScalar(
                text: text, quoted: scalar.style != YAML_PLAIN_SCALAR_STYLE, tag: scalar.tag.map { String(cString: $0) }
            )), mark: start), 1)
        case YAML_SEQUENCE_START_EVENT:
            anchor = event.pointee.data.sequence_start.anchor.map { String(cString: $0) }
            composed = try sequence(at: start, depth: depth)
        case YAML_MAPPING_START_EVENT:
            anchor = event.pointee.data.mapping_start.anchor.map { String(cString: $0) }
            composed = try mapping(at: start, depth: depth)
        default:
            throw YAMLSyntaxError(message: "unexpected event \(event.pointee.type.rawValue)", mark: start)
        }
        // Registered once whole, so that a node cannot contain an alias of itself; a later
        // anchor of the same name replaces it, as YAML says.
        if let anchor { anchors[anchor] = composed }
        return composed
    }

    private func sequence(at start: YAMLMark, depth: Int) throws(YAMLSyntaxError) -> (node: YAMLNode, size: Int) {
        var elements: [YAMLNode] = []
        var size = 1
        try next()
        while event.pointee.type != YAML_SEQUENCE_END_EVENT {
            let element = try node(depth: depth + 1)
            elements.append(element.node)
            size += element.size
            try next()
        }
        return (YAMLNode(content: .sequence(elements), mark: start), size)
    }

    private func mapping(at start: YAMLMark, depth: Int) throws(YAMLSyntaxError) -> (node: YAMLNode, size: Int) {
        var pairs: [YAMLPair] = []
        // Most mappings have a few pairs: one allocation instead of growing from one.
        pairs.reserveCapacity(4)
        var written = WrittenKeys()
        var size = 1
        try next()
        while event.pointee.type != YAML_MAPPING_END_EVENT {
            let key = try node(depth: depth + 1)
            try written.check(key.node, after: pairs)
            try next()
            let value = try node(depth: depth + 1)
            pairs.append(YAMLPair(key: key.node, value: value.node))
            size += key.size + value.size
            try next()
        }
        return (YAMLNode(content: .mapping(pairs), mark: start), size)
    }

    private func mark() -> YAMLMark {
        YAMLMark(line: event.pointee.start_mark.line + 1, column: event.pointee.start_mark.column + 1)
    }

    private func parserError() -> YAMLSyntaxError {
        let problem = parser.pointee.problem.map { String(cString: $0) } ?? "cannot parse"
        switch parser.pointee.error {
        case YAML_MEMORY_ERROR:
            return YAMLSyntaxError(message: "out of memory")
        case YAML_READER_ERROR:
            // The reader gives a byte offset, not a line: counted here, the column in
            // characters as libyaml counts the others (UTF-8 continuation bytes skipped).
            let before = input.prefix(parser.pointee.problem_offset)
            let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
            let line = before.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
            let column = before[lineStart...].reduce(1) { $1 & 0xC0 == 0x80 ? $0 : $0 + 1 }
            return YAMLSyntaxError(message: problem, mark: YAMLMark(line: line, column: column))
        default:
            let context = parser.pointee.context.map { " (\(String(cString: $0)) at line \(parser.pointee.context_mark.line + 1))" } ?? ""
            let place = parser.pointee.problem_mark
            return YAMLSyntaxError(message: problem + context, mark: YAMLMark(line: place.line + 1, column: place.column + 1))
        }
    }

    /// An anchor's name in a message only when it is safe to print.
    private static func safe(_ name: String) -> String {
        ConfigSyntax.isSafeToEcho(name) ? name : "…"
    }
}

/// Finds a scalar key written twice in one mapping: YAML forbids it, and either reading
/// (the first wins, the last wins) would hide a mistake. Compared as text, so `port` and
/// `"port"` are the same key. Most mappings have a few keys, searched in order; one that
/// names thousands of entries (credentials, identities) is hashed from its 16th key on.
private struct WrittenKeys {
    private static let searchedUpTo = 16

    private var hashed: [String: YAMLMark] = [:]

    /// Reports `key` at its place, naming the first; `earlier` are the mapping's pairs so far.
    mutating func check(_ key: YAMLNode, after earlier: [YAMLPair]) throws(YAMLSyntaxError) {
        guard case .scalar(let scalar) = key.content else { return }
        let first: YAMLMark?
        if earlier.count < Self.searchedUpTo {
            first = earlier.first { Self.text($0.key) == scalar.text }?.key.mark
        } else {
            if earlier.count == Self.searchedUpTo {
                for pair in earlier { if let text = Self.text(pair.key) { hashed[text] = pair.key.mark } }
            }
            first = hashed[scalar.text]
            if first == nil { hashed[scalar.text] = key.mark }
        }
        if let first {
            throw YAMLSyntaxError(
                message: "duplicate key\(ConfigSyntax.quoted(scalar.text)) in a mapping (first at line \(first.line))",
                mark: key.mark
            )
        }
    }

    private static func text(_ node: YAMLNode) -> String? {
        guard case .scalar(let scalar) = node.content else { return nil }
        return scalar.text
    }
}
