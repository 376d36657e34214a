// Lenient Codable decoding: every raw type records its problems in a sink carried in the
// decoder's userInfo and carries on, so that one pass reports every wrong type and every
// unknown key instead of stopping at the first `DecodingError`.

/// Where decoding problems go. Lives for one load, on one thread.
final class DecodeSink {
    var problems: [PendingProblem] = []

    /// - Parameter expecting: the type the caller asked for; Yams reports the node kind
    ///   it wanted (`Node.Scalar`) instead.
    func record(_ error: any Error, expecting: Any.Type? = nil) {
        switch error {
        case let shape as RawShapeError:
            problems.append(PendingProblem(path: shape.path, message: shape.message, expected: shape.expected))
        case let decoding as DecodingError:
            problems.append(Self.problem(for: decoding, expecting: expecting))
        default:
            problems.append(PendingProblem(path: .root, message: "cannot decode", expected: nil))
        }
    }

    func unknownKey(_ path: ConfigPath, name: String, known: [String]) {
        var message = "unknown key" + ConfigSyntax.quoted(name)
        if let suggestion = closestMatch(to: name, in: known) {
            message += "; did you mean '\(suggestion)'?"
        }
        problems.append(PendingProblem(
            path: path, message: message,
            expected: "one of " + known.joined(separator: ", "), anchor: .key
        ))
    }

    /// Yams' own descriptions quote the offending node, which may be a secret: build the
    /// message from the type alone. The loader adds what was found from the node index.
    private static func problem(for error: DecodingError, expecting: Any.Type?) -> PendingProblem {
        switch error {
        case .typeMismatch(let type, let context):
            return PendingProblem(path: ConfigPath(codingPath: context.codingPath), message: "wrong type", expected: describe(expecting ?? type))
        case .valueNotFound(let type, let context):
            return PendingProblem(path: ConfigPath(codingPath: context.codingPath), message: "missing value", expected: describe(expecting ?? type))
        case .keyNotFound(let key, let context):
            return PendingProblem(path: ConfigPath(codingPath: context.codingPath + [key]), message: "missing key", expected: nil)
        case .dataCorrupted(let context):
            return PendingProblem(path: ConfigPath(codingPath: context.codingPath), message: "invalid value", expected: nil)
        @unknown default:
            return PendingProblem(path: .root, message: "cannot decode", expected: nil)
        }
    }

    private static func describe(_ type: Any.Type) -> String? {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type: "an integer"
        case is Double.Type: "a number"
        default: nil
        }
    }
}

extension CodingUserInfoKey {
    static let latchkeyDecodeSink = CodingUserInfoKey(rawValue: "latchkey.decodeSink")!
}

/// A problem a raw type found in its own node: wrong shape, unparsable scalar.
struct RawShapeError: Error {
    var path: ConfigPath
    var message: String
    var expected: String?

    init(_ decoder: any Decoder, _ message: String, expected: String?) {
        self.path = ConfigPath(codingPath: decoder.codingPath)
        self.message = message
        self.expected = expected
    }
}

/// Any key at all, to list what a mapping really holds.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}

/// Decodes anything and nothing: steps an unkeyed container past an element that failed.
private struct Skip: Decodable {
    init(from decoder: any Decoder) throws {}
}

/// The fields of one mapping, each decoded on its own: a bad field is recorded and read
/// as absent, the others still decode.
struct RawFields<Key: CodingKey & CaseIterable> {
    let container: KeyedDecodingContainer<Key>
    let sink: DecodeSink
    let path: ConfigPath

    func callAsFunction<T: Decodable>(_ key: Key) -> T? {
        do {
            return try container.decodeIfPresent(T.self, forKey: key)
        } catch {
            sink.record(error, expecting: T.self)
            return nil
        }
    }

    func contains(_ key: Key) -> Bool { container.contains(key) }
}

extension Decoder {
    var decodeSink: DecodeSink {
        // The loader always installs one; a bare `YAMLDecoder` use gets a throwaway sink.
        userInfo[.latchkeyDecodeSink] as? DecodeSink ?? DecodeSink()
    }

    /// A keyed view of this node that reports every key `Key` does not know.
    /// - Parameters:
    ///   - expected: what to say when the node is not a mapping.
    ///   - extensionPrefix: keys starting with it are ignored (`x-` at the top level, as in
    ///     Compose files, to hold YAML anchors).
    func rawFields<Key: CodingKey & CaseIterable>(
        _: Key.Type, expected: String, extensionPrefix: String? = nil
    ) throws -> RawFields<Key> {
        let sink = decodeSink
        let everything: KeyedDecodingContainer<AnyKey>
        do {
            everything = try container(keyedBy: AnyKey.self)
        } catch {
            throw RawShapeError(self, "wrong type", expected: expected)
        }
        let known = Key.allCases.map(\.stringValue)
        let path = ConfigPath(codingPath: codingPath)
        for key in everything.allKeys where Key(stringValue: key.stringValue) == nil {
            if let extensionPrefix, key.stringValue.hasPrefix(extensionPrefix) { continue }
            sink.unknownKey(path / key.stringValue, name: key.stringValue, known: known)
        }
        return RawFields(container: try container(keyedBy: Key.self), sink: sink, path: path)
    }

    /// This node as a plain string, or a shape error saying what was expected.
    func rawString(expected: String) throws -> String {
        do {
            return try singleValueContainer().decode(String.self)
        } catch {
            throw RawShapeError(self, "wrong type", expected: expected)
        }
    }
}

/// A YAML sequence whose elements decode one by one; an element that fails is recorded
/// and kept as nil so that later indices still match the document.
struct LenientList<Element: Decodable>: Decodable {
    var items: [Element?]

    init(_ items: [Element?]) {
        self.items = items
    }

    init(from decoder: any Decoder) throws {
        let sink = decoder.decodeSink
        var container: any UnkeyedDecodingContainer
        do {
            container = try decoder.unkeyedContainer()
        } catch {
            throw RawShapeError(decoder, "wrong type", expected: "a list")
        }
        var items: [Element?] = []
        while !container.isAtEnd {
            do {
                items.append(try container.decode(Element.self))
            } catch {
                sink.record(error, expecting: Element.self)
                items.append(nil)
                _ = try container.decode(Skip.self)
            }
        }
        self.items = items
    }

    /// Elements that decoded, with their index in the document.
    var decoded: [(index: Int, element: Element)] {
        items.enumerated().compactMap { pair in pair.element.map { (pair.offset, $0) } }
    }
}

/// A YAML mapping with user-chosen keys (credential names), in document order; a value
/// that fails is recorded and kept as nil so that its name still counts as defined.
struct LenientMap<Value: Decodable>: Decodable {
    var entries: [(key: String, value: Value?)]

    init(from decoder: any Decoder) throws {
        let sink = decoder.decodeSink
        let container: KeyedDecodingContainer<AnyKey>
        do {
            container = try decoder.container(keyedBy: AnyKey.self)
        } catch {
            throw RawShapeError(decoder, "wrong type", expected: "a mapping of names to entries")
        }
        var entries: [(key: String, value: Value?)] = []
        for key in container.allKeys {
            do {
                entries.append((key.stringValue, try container.decode(Value.self, forKey: key)))
            } catch {
                sink.record(error)
                entries.append((key.stringValue, nil))
            }
        }
        self.entries = entries
    }
}

/// The known name nearest to a mistyped one, if it is close enough to be a typo.
func closestMatch(to name: String, in candidates: [String]) -> String? {
    let lowered = Array(name.lowercased().utf8)
    var best: (name: String, distance: Int)?
    for candidate in candidates {
        let distance = editDistance(lowered, Array(candidate.utf8))
        if distance <= max(1, candidate.utf8.count / 3), distance < (best?.distance ?? .max) {
            best = (candidate, distance)
        }
    }
    return best?.name
}

private func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}
